package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/internal/sysmem"
)

// The memory guards of the commands that fit. Every fit's peak memory is
// estimated from the sizes (dictionary.EstimateMemory for DaDiL,
// adapt.EstimateMemory for the other methods) and compared with the limit
// of --max-memory, or the machine's (internal/sysmem): twice, before the
// data are read with the smallest sizes they could have (one feature, two
// classes, no rows), and once they are read, before any fit, with their
// sizes. A refusal names the flags that set the largest part of the
// estimate. The runtime's soft memory limit is then set to the same
// limit, so that the collector keeps the heap below it.

// maxMemoryUsage is the help of --max-memory.
const maxMemoryUsage = "refuse, before any work, fits whose estimated peak memory exceeds `SIZE` (e.g. 8GiB, 500MB; default: the machine's: available memory, cgroup limit or ulimit -v, the smallest)"

// parseMaxMemory parses the value v of --max-memory (given tells whether
// the flag was given): 0 for the machine's limit.
func parseMaxMemory(v string, given bool) (int64, error) {
	if !given {
		return 0, nil
	}
	b, err := sysmem.ParseSize(v)
	switch {
	case err != nil:
		return 0, usageError{fmt.Errorf("--max-memory %s: %v", clip.Arg(v), err)}
	case b == 0:
		return 0, usageError{fmt.Errorf("--max-memory %s: need a positive size; leave the flag out for the machine's memory", clip.Arg(v))}
	}
	return b, nil
}

// memoryLimit returns the limit of --max-memory (max, 0 when not given)
// or the machine's.
func memoryLimit(max int64) sysmem.Limit {
	if max > 0 {
		return sysmem.Limit{Bytes: max, Source: "--max-memory"}
	}
	return sysmem.Machine()
}

// useMemoryLimit sets the runtime's soft memory limit to lim unless
// GOMEMLIMIT set one, and returns the function that restores the previous
// limit.
func useMemoryLimit(lim sysmem.Limit) func() {
	prev := debug.SetMemoryLimit(-1)
	if prev != math.MaxInt64 || lim.Bytes <= 0 {
		return func() {}
	}
	debug.SetMemoryLimit(lim.Bytes)
	return func() { debug.SetMemoryLimit(prev) }
}

// partFlags are the DaDiL flags that set each part of the memory estimate
// (dictionary.MemoryEstimate.Largest).
var partFlags = map[string][]string{
	"atoms":          {"atoms", "samples"},
	"step":           {"atoms", "batch"},
	"reconstruction": {"atoms", "samples", "reconstruction-block"},
	"transport":      {"atoms", "samples", "transport", "ensemble-transport"},
	"classifiers":    {"atoms", "samples"},
}

// flagValue returns the value in effect of DaDiL flag name.
func flagValue(name string, set *dictionary.Settings) any {
	switch name {
	case "atoms":
		return set.Atoms
	case "samples":
		return set.Samples
	case "batch":
		return set.Batch
	case "reconstruction-block":
		if set.ReconstructionBlock == 0 {
			return dictionary.DefaultReconstructionBlock
		}
		return set.ReconstructionBlock
	case "transport":
		return set.Transport
	case "ensemble-transport":
		return set.EnsembleTransport
	}
	return nil
}

// describeFlags names the flags with their values, those given first
// ("--atoms 2000"), then the others with the values in effect
// ("--samples (default 200)"), and returns the flags to lower: those
// given, or all when none was.
func (f *dictFlags) describeFlags(names []string, set *dictionary.Settings) (desc, lower string) {
	fs := f.fs
	var given, dflt, giv []string
	for _, name := range names {
		if o, ok := f.swept[name]; ok {
			name = o
		}
		if f := fs.Lookup(name); f != nil && flagSet(fs, name) {
			given = append(given, fmt.Sprintf("--%s %s", name, clip.Arg(f.Value.String())))
			giv = append(giv, "--"+name)
		} else {
			dflt = append(dflt, fmt.Sprintf("--%s (default %v)", name, flagValue(name, set)))
		}
	}
	if len(giv) == 0 {
		for _, name := range names {
			giv = append(giv, "--"+name)
		}
	}
	return strings.Join(append(given, dflt...), ", "), orList(giv)
}

// orList joins words as "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// memoryError rewords a *dictionary.MemoryError for the command line: the
// flags of the largest part first, then the estimate and the limit;
// early tells that the sizes were the smallest any data could have.
func (f *dictFlags) memoryError(err error, early bool) error {
	var me *dictionary.MemoryError
	if !errors.As(err, &me) {
		return err
	}
	s, z := &me.Settings, &me.Sizes
	fit := fmt.Sprintf("a fit of K = %d atoms of n = %d points (batches of n_b = %d)", s.Atoms, s.Samples, s.Batch)
	if early {
		fit += fmt.Sprintf(" would need at least %s with any data (%s)", sysmem.Size(me.Need), me.Estimate)
	} else {
		fit += fmt.Sprintf(" on N = %d domains of R = %d rows (d = %d, c = %d) would need about %s (%s)", z.Domains, z.Rows, z.Features, z.Classes, sysmem.Size(me.Need), me.Estimate)
	}
	lim := me.Limit.String()
	if me.Limit.Source == "Settings.MaxMemory" {
		lim = sysmem.Size(me.Limit.Bytes) + " (--max-memory)"
	}
	names := partFlags[me.Estimate.Largest()]
	if names == nil {
		return fmt.Errorf("the data alone: %s, more than the limit of %s; raise --max-memory if the machine has more", fit, lim)
	}
	desc, lower := f.describeFlags(names, s)
	return fmt.Errorf("%s: %s, more than the limit of %s; lower %s, or raise --max-memory if the machine has more", desc, fit, lim, lower)
}

// checkEarly refuses, before any data is read, DaDiL settings whose fit
// exceeds the memory limit with any data: sources labeled sources and a
// target of one feature, two classes and no rows, the smallest sizes.
func (f *dictFlags) checkEarly(sources int) error {
	set, err := f.settings(f.fs, 2, func(string, ...any) {})
	if err != nil {
		return err
	}
	z := dictionary.Sizes{Domains: sources + 1, Labeled: sources, Features: 1, Classes: 2}
	return f.memoryError(dictionary.CheckMemory(z, &set), true)
}

// checkFit refuses, once the problem is read, a fit of more atoms than
// labeled rows or beyond the memory limit, naming the flags; note
// receives ScaleWarning's warning. fits is the number of fits that run at
// once (each adds its memory to the data, held once), kept the number of
// fitted dictionaries kept meanwhile (each counted as its atoms).
func (f *dictFlags) checkFit(p *dataset.Problem, sets []dictionary.Settings, fits, kept int, note func(string, ...any)) error {
	z := dictionary.SizesOf(p.Domains(), p.Classes)
	var worst dictionary.MemoryEstimate
	var worstSet dictionary.Settings
	for _, set := range sets {
		if err := dictionary.CheckScale(z, &set); err != nil {
			r := set.Resolved(z)
			names := []string{"atoms"}
			if r.Atoms <= z.LabeledRows {
				names = append(names, "samples")
			}
			desc, lower := f.describeFlags(names, &r)
			return fmt.Errorf("%s: %s; lower %s", desc, strings.TrimPrefix(err.Error(), "dictionary: "), lower)
		}
		if est := dictionary.EstimateMemory(z, &set); est.Peak() >= worst.Peak() {
			worst, worstSet = est, set
		}
	}
	if len(sets) == 0 {
		return nil
	}
	if w := dictionary.ScaleWarning(z, &worstSet); w != "" {
		note("%s", w)
	}
	lim, ok := worstSet.MemoryLimit()
	if !ok {
		return nil
	}
	need := worst.Data
	for range max(fits, 1) {
		need = saturatingAdd(need, worst.Peak()-worst.Data)
	}
	for range kept {
		need = saturatingAdd(need, worst.Atoms)
	}
	if need <= lim.Bytes {
		return nil
	}
	me := &dictionary.MemoryError{Need: need, Estimate: worst, Limit: lim, Settings: worstSet.Resolved(z), Sizes: z}
	err := f.memoryError(me, false)
	switch {
	case fits > 1 && kept > 0:
		err = fmt.Errorf("%w (%d fits at once, %d fitted dictionaries kept: give --workers 1 to run them in turn)", err, fits, kept)
	case fits > 1:
		err = fmt.Errorf("%w (%d fits at once: give --workers 1 to run them in turn)", err, fits)
	case kept > 0:
		err = fmt.Errorf("%w (%d fitted dictionaries kept)", err, kept)
	}
	return err
}

// checkFits is checkFit for every problem of an analysis whose jobs fits
// run workers at a time; keep tells whether the analysis keeps every
// fitted dictionary until the end.
func (a *analyzeFlags) checkFits(ps []*dataset.Problem, sets []dictionary.Settings, jobs int, keep bool) error {
	fits, kept := atOnce(jobs, a.workers), 0
	if keep {
		kept = jobs - fits
	}
	for _, p := range ps {
		if err := a.dict.checkFit(p, sets, fits, kept, a.note); err != nil {
			return err
		}
	}
	return nil
}

// atOnce returns how many of jobs jobs run at once on workers workers (0:
// one per core).
func atOnce(jobs, workers int) int {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return max(min(jobs, workers), 1)
}

// checkMethodsMemory refuses, once the problem is read, methods whose fits,
// workers at a time, would exceed the memory limit lim with the data:
// the data plus the largest estimates (adapt.EstimateMemory) of as many
// methods as run at once.
func checkMethodsMemory(fs *flag.FlagSet, names []string, cfg *adapt.Config, p *dataset.Problem, workers int, lim sysmem.Limit) error {
	type est struct {
		name  string
		bytes int64
	}
	var ests []est
	for _, n := range names {
		b, err := adapt.EstimateMemory(n, cfg, p)
		if err != nil {
			return err
		}
		ests = append(ests, est{n, b})
	}
	slices.SortStableFunc(ests, func(a, b est) int { return -cmp.Compare(a.bytes, b.bytes) })
	z := dictionary.SizesOf(p.Domains(), p.Classes)
	need := dictionary.EstimateMemory(z, &dictionary.Settings{Atoms: 1, Samples: 1, Batch: 1}).Data
	at := atOnce(len(ests), workers)
	var parts []string
	for _, e := range ests[:at] {
		need = saturatingAdd(need, e.bytes)
		parts = append(parts, e.name+" "+sysmem.Size(e.bytes))
	}
	if need <= lim.Bytes {
		return nil
	}
	top := ests[0].name
	var hint string
	switch {
	case top == "dadil-r" || top == "dadil-e":
		hint = "lower --atoms, --samples or --batch"
	case adapt.DenseTransport(top):
		hint = "lower --max-rows"
		if cfg.MaxRows == 0 {
			hint = "give --max-rows"
		}
	default:
		hint = "leave " + top + " out of --methods"
	}
	what := fmt.Sprintf("%d methods at once", at)
	if at == 1 {
		what = "one method at a time"
	} else {
		hint += ", give --workers 1"
	}
	return fmt.Errorf("--methods %s, --max-rows %d: the fits would need about %s (the data and %s: %s), more than the limit of %s; %s, or raise --max-memory if the machine has more",
		clip.Arg(fs.Lookup("methods").Value.String()), cfg.MaxRows, sysmem.Size(need), what, strings.Join(parts, ", "), lim, hint)
}

// saturatingAdd returns a + b for non-negative byte counts, at most
// math.MaxInt64.
func saturatingAdd(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}
