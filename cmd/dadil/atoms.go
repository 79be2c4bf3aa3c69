package main

import (
	"errors"
	"fmt"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/selection"
)

// autoExtraAtoms are the numbers of atoms beyond the sources that --atoms
// auto chooses between: as many atoms as sources (the default) and one
// more (docs/defaults.md).
var autoExtraAtoms = []int{0, 1}

// allowAutoAtoms lets a command with sources --source files choose K
// with --atoms auto (chooseAtoms), which holds each source out in turn
// and so needs at least 2.
func (f *dictFlags) allowAutoAtoms(sources int) error {
	f.allowAuto = true
	if f.autoAtoms && sources < 2 {
		return usageError{errors.New("--atoms auto holds each source out in turn, so it needs at least 2 --source")}
	}
	return nil
}

// worstAtoms returns set with the most atoms --atoms auto may choose, for
// the memory checks made before the choice.
func (f *dictFlags) worstAtoms(set dictionary.Settings) dictionary.Settings {
	if f.autoAtoms {
		set.ExtraAtoms = autoExtraAtoms[len(autoExtraAtoms)-1]
	}
	return set
}

// chooseAtoms resolves --atoms auto on the problem p by
// selection.ExtraAtoms (held-out sources scored by balanced accuracy,
// DaDiL-R with the settings set and the classifier trainer): it sets
// set.ExtraAtoms to the choice, and note receives the scores and the
// choice. Without --atoms auto it does nothing.
func (f *dictFlags) chooseAtoms(p *dataset.Problem, set *dictionary.Settings, trainer classify.Trainer, note func(string, ...any)) error {
	if !f.autoAtoms {
		return nil
	}
	ch, err := selection.ExtraAtoms(p, adapt.Config{Seed: f.seed, Dictionary: set, Classifier: trainer}, autoExtraAtoms)
	if err != nil {
		return fmt.Errorf("--atoms auto: %w", err)
	}
	set.ExtraAtoms = ch.Extra
	note("--atoms auto: DaDiL-R's balanced accuracy on the held-out sources is %.4f with K = %d atoms (the number of sources), %.4f with K = %d: K = %d",
		ch.Scores[0], len(p.Sources), ch.Scores[1], len(p.Sources)+1, len(p.Sources)+set.ExtraAtoms)
	return nil
}
