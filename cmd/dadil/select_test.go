package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/dadil/dadil/selection"
)

func TestRequestedScorers(t *testing.T) {
	for _, tc := range []struct {
		list string
		want []string
		err  string
	}{
		{"", nil, ""},
		{"all", selection.Names(), ""},
		{"snd, entropy", []string{"snd", "entropy"}, ""},
		{",", nil, "--select is empty"},
		{"iwv,iwv", nil, "iwv is given twice"},
		{"oracle", nil, `unknown scorer "oracle"`},
	} {
		s, err := requestedScorers(tc.list, 1)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.list, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(scorerNames(s), tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.list, scorerNames(s), err, tc.want)
		}
	}
	if code, _, stderr := runCLI("bench", "suite", "--data", t.TempDir(), "--select", "oracle"); code != 2 || !strings.Contains(stderr, `unknown scorer "oracle"`) {
		t.Errorf("bench suite --select oracle: exit %d, %q", code, stderr)
	}
}
