package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dadil/dadil/dictionary"
)

// Without a terminal, dadil fit's progress is a line at most every 10 s.
func TestProgressLines(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&env{stderr: &buf}, false, 100)
	for i, sec := range []int{3, 11, 15, 20, 25, 40} {
		p.epoch(dictionary.EpochStats{Epoch: i + 1, Epochs: 100, Loss: 0.5, Elapsed: time.Duration(sec) * time.Second})
	}
	p.done()
	want := "epoch 2 of at most 100: loss 0.5, 11s elapsed\n" +
		"epoch 5 of at most 100: loss 0.5, 25s elapsed\n" +
		"epoch 6 of at most 100: loss 0.5, 40s elapsed\n"
	if buf.String() != want {
		t.Errorf("progress lines\n%s\nwant\n%s", buf.String(), want)
	}
	buf.Reset()
	q := newProgress(&env{stderr: &buf}, true, 100)
	q.epoch(dictionary.EpochStats{Epoch: 1, Epochs: 100, Elapsed: time.Minute})
	if strings.TrimSpace(buf.String()) != "" {
		t.Errorf("--quiet wrote %q", buf.String())
	}
}
