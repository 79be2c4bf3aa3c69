package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/dadil/dadil/dictionary"
)

// progress shows an epoch bar with the loss and an ETA on stderr when
// stderr is a terminal; otherwise (a log file, a batch job) it writes a
// line at most every logEvery.
type progress struct {
	bar  *progressbar.ProgressBar
	log  io.Writer
	last time.Duration // elapsed time of the last line written to log
}

// logEvery is the least time between two progress lines in a log.
const logEvery = 10 * time.Second

func newProgress(e *env, quiet bool, total int) *progress {
	if quiet {
		return &progress{}
	}
	f, ok := e.stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return &progress{log: e.stderr}
	}
	return &progress{bar: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription("epochs"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetWidth(30),
	)}
}

// epoch is a dictionary.Settings.Progress callback.
func (p *progress) epoch(s dictionary.EpochStats) {
	if p.log != nil && s.Elapsed-p.last >= logEvery {
		p.last = s.Elapsed
		fmt.Fprintf(p.log, "epoch %d of at most %d: loss %.4g, %s elapsed\n", s.Epoch, s.Epochs, s.Loss, s.Elapsed.Round(time.Second))
	}
	if p.bar == nil {
		return
	}
	p.bar.Describe(fmt.Sprintf("epochs (loss %.4g)", s.Loss))
	p.bar.Set(s.Epoch)
}

func (p *progress) done() {
	if p.bar != nil {
		p.bar.Finish()
	}
}

// countBar is a bar over a count of jobs, on stderr when it is a terminal.
type countBar struct {
	bar *progressbar.ProgressBar
	e   *env
	d   string
}

func newCountBar(e *env, description string) *countBar {
	return &countBar{e: e, d: description}
}

// show advances the bar and reports whether it is shown; when it is not
// (stderr is not a terminal) the caller prints a line instead.
func (c *countBar) show(done, total int, what string) bool {
	f, ok := c.e.stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false
	}
	if c.bar == nil {
		c.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(f),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetWidth(30),
		)
	}
	c.bar.Describe(c.d + ": " + what)
	c.bar.Set(done)
	if done == total {
		c.bar.Finish()
	}
	return true
}
