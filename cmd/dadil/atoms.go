package main

import (
	"fmt"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/selection"
)

// autoExtraAtoms are the numbers of atoms beyond the sources that --atoms
// auto chooses between: as many atoms as sources (the default) and one
// more, which gains where the domains' classes stay apart along the move
// onto the target and loses where they do not (docs/defaults.md).
var autoExtraAtoms = []int{0, 1}

// worstAtoms returns set with the most atoms --atoms auto may choose, for
// the memory checks made before the choice.
func (f *dictFlags) worstAtoms(set dictionary.Settings) dictionary.Settings {
	if f.autoAtoms {
		set.ExtraAtoms = autoExtraAtoms[len(autoExtraAtoms)-1]
	}
	return set
}

// chooseAtoms resolves --atoms auto on the problem p: it scores DaDiL-R
// with every number of atoms of autoExtraAtoms beyond the sources by
// held-out sources scored by balanced accuracy
// (selection.HeldOutSources{Balanced: true}: each source in turn the
// target of the others, so one fit per source and choice, none reading
// the target's labels), and sets set.ExtraAtoms to the choice of the
// highest score (the first on ties). note receives the scores and the
// choice. Without --atoms auto it does nothing.
func (f *dictFlags) chooseAtoms(p *dataset.Problem, set *dictionary.Settings, trainer classify.Trainer, note func(string, ...any)) error {
	if !f.autoAtoms {
		return nil
	}
	scorer := selection.HeldOutSources{Balanced: true}
	scores := make([]float64, len(autoExtraAtoms))
	for i, extra := range autoExtraAtoms {
		s := *set
		s.ExtraAtoms = extra
		cfg := &adapt.Config{Seed: f.seed, Dictionary: &s, Classifier: trainer}
		v, err := scorer.Score(p, &selection.Candidate{Build: cfg.Builder("dadil-r"), Predictors: 1})
		if err != nil {
			return fmt.Errorf("--atoms auto: %w", err)
		}
		scores[i] = v[0]
	}
	best := selection.Best(scores)
	if best < 0 {
		return fmt.Errorf("--atoms auto: no held-out score (%v)", scores)
	}
	set.ExtraAtoms = autoExtraAtoms[best]
	note("--atoms auto: DaDiL-R's balanced accuracy on the held-out sources is %.4f with K = %d atoms (the number of sources), %.4f with K = %d: K = %d",
		scores[0], len(p.Sources), scores[1], len(p.Sources)+1, len(p.Sources)+set.ExtraAtoms)
	return nil
}
