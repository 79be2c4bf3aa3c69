package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestParseThreads(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  bool
	}{
		{"all,1", []int{4, 1}, false},
		{"1,all,4,2", []int{1, 4, 2}, false},
		{"0", nil, true},
		{"two", nil, true},
	} {
		got, err := parseThreads("threads", tc.in, 4)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("parseThreads(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// TestPrintBenchDaDiL checks the summary over splits (median time, mean
// accuracies) and the speed-ups against the reference's fastest setting.
func TestPrintBenchDaDiL(t *testing.T) {
	py := "Python reference (PyTorch x, POT y)"
	rows := []dadilTiming{
		{Implementation: goImpl, Target: "W", Fold: 1, Threads: 2, TotalSeconds: 5, AccuracyR: 50, AccuracyE: 40},
		{Implementation: goImpl, Target: "W", Fold: 1, Threads: 1, TotalSeconds: 9, AccuracyR: 50, AccuracyE: 40},
		{Implementation: py, Target: "W", Fold: 1, Threads: 1, TotalSeconds: 60, AccuracyR: 48, AccuracyE: 30},
		{Implementation: py, Target: "W", Fold: 1, Threads: 2, TotalSeconds: 150, AccuracyR: 48, AccuracyE: 30},
		{Implementation: goImpl, Target: "A", Fold: 2, Threads: 2, TotalSeconds: 7, AccuracyR: 60, AccuracyE: 50},
		{Implementation: goImpl, Target: "A", Fold: 2, Threads: 1, TotalSeconds: 11, AccuracyR: 60, AccuracyE: 50},
		{Implementation: py, Target: "A", Fold: 2, Threads: 1, TotalSeconds: 80, AccuracyR: 52, AccuracyE: 40},
		{Implementation: py, Target: "A", Fold: 2, Threads: 2, TotalSeconds: 170, AccuracyR: 52, AccuracyE: 40},
	}
	var out bytes.Buffer
	printBenchDaDiL(&env{stdout: &out}, rows, 1)
	got := out.String()
	for _, want := range []string{
		"| dadil (Go) | 2 | 6.0 | 55.00 | 45.00 |",
		"| " + py + " | 1 | 70.0 | 50.00 | 35.00 |",
		"dadil on 2 thread(s): 11.7× faster than the Python reference at its fastest (1 thread(s)), 26.7× on as many threads.",
		"dadil on 1 thread(s): 7.0× faster than the Python reference at its fastest (1 thread(s)).",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
