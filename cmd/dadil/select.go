package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/selection"
)

// selectUsage is the usage of the --select flag of dadil adapt and dadil
// bench suite.
var selectUsage = "score every method without target labels with the scorers in `LIST` (" +
	strings.Join(selection.Names(), ", ") + "), or all, and mark the method each one chooses (see docs/validation.md)"

// requestedScorers resolves --select: none for an empty list, else the
// scorers named (all of them for "all"), in the order given, seeded by
// seed.
func requestedScorers(list string, seed uint64) ([]selection.Scorer, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	names, err := listFlag("--select", "scorer", list, selection.Names())
	if err != nil {
		return nil, err
	}
	var out []selection.Scorer
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			return nil, fmt.Errorf("--select: %s is given twice", clip.Arg(n))
		}
		s, err := selection.New(n, seed)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// scorerNames returns the names of the scorers.
func scorerNames(scorers []selection.Scorer) []string {
	var out []string
	for _, s := range scorers {
		out = append(out, s.Name())
	}
	return out
}

// holdsOut reports whether a held-out-sources scorer (held-out or
// held-out-balanced) is among scorers.
func holdsOut(scorers []selection.Scorer) bool {
	return slices.ContainsFunc(scorers, func(s selection.Scorer) bool {
		_, ok := s.(selection.HeldOutSources)
		return ok
	})
}

// choose returns the method every scorer chooses among the reports (the
// highest score; none when it failed everywhere), and notes the failures.
func choose(ms []methodReport, scorers []selection.Scorer, note func(string, ...any)) []selectedMethod {
	var out []selectedMethod
	for j, s := range scorers {
		scores := make([]float64, len(ms))
		for i, m := range ms {
			if m.Selection == nil { // not scored (--select-among)
				scores[i] = math.NaN()
				continue
			}
			v := m.Selection[j]
			scores[i] = v.Float()
			if v.Error != "" {
				note("%s: %s gives no score: %s", m.Method, s.Name(), v.Error)
			}
		}
		sel := selectedMethod{Scorer: s.Name()}
		if best := selection.Best(scores); best >= 0 {
			sel.Method = ms[best].Method
		}
		out = append(out, sel)
	}
	return out
}

// selectionCell formats a scorer's value for a table: bold for the
// chosen method, a dash when there is none.
func selectionCell(v selection.Value, chosen bool) string {
	if v.Score == nil {
		return " — |"
	}
	if chosen {
		return fmt.Sprintf(" **%.4f** |", *v.Score)
	}
	return fmt.Sprintf(" %.4f |", *v.Score)
}
