package selection

import (
	"fmt"

	"github.com/dadil/dadil/adapt"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
)

// AtomsChoice is the choice of ExtraAtoms.
type AtomsChoice struct {
	// Extra is the chosen number of atoms beyond the sources
	// (dictionary.Settings.ExtraAtoms), one of the candidates.
	Extra int
	// Scores holds every candidate's score, in the candidates' order:
	// DaDiL-R's mean balanced accuracy on the held-out sources.
	Scores []float64
}

// ExtraAtoms chooses DaDiL's number of atoms beyond the sources on the
// problem p among extras without target labels: for every candidate M,
// DaDiL-R, built by cfg with cfg.Dictionary's settings (nil: the
// defaults) but ExtraAtoms = M and Atoms = 0, is scored by held-out sources
// scored by balanced accuracy (HeldOutSources{Balanced: true}: each source
// in turn the target of the others, one fit per source and candidate), and
// the candidate of the highest score (the first on ties) is chosen.
//
// With extras {0, 1} it is dadil fit --atoms auto: one atom more than the
// sources gains where the domains' classes stay apart along the move onto
// the target, and loses where they do not (docs/defaults.md measures it on
// the development suite). p needs at least 2 sources; p.Test is not read.
func ExtraAtoms(p *dataset.Problem, cfg adapt.Config, extras []int) (AtomsChoice, error) {
	if len(extras) == 0 {
		return AtomsChoice{}, fmt.Errorf("selection: ExtraAtoms: no candidate")
	}
	ch := AtomsChoice{Scores: make([]float64, len(extras))}
	for i, extra := range extras {
		if extra < 0 {
			return AtomsChoice{}, fmt.Errorf("selection: ExtraAtoms: %d atoms beyond the sources", extra)
		}
		c := WithExtraAtoms(cfg, extra)
		v, err := HeldOutSources{Balanced: true}.Score(p, &Candidate{Build: c.Builder("dadil-r"), Predictors: 1})
		if err != nil {
			return AtomsChoice{}, fmt.Errorf("%w (ExtraAtoms, %d atoms beyond the sources)", err, extra)
		}
		ch.Scores[i] = v[0]
	}
	best := Best(ch.Scores)
	if best < 0 {
		return AtomsChoice{}, fmt.Errorf("selection: ExtraAtoms: no held-out score (%v)", ch.Scores)
	}
	ch.Extra = extras[best]
	return ch, nil
}

// WithExtraAtoms returns cfg with a copy of its dictionary settings (nil:
// the defaults) asking for extra atoms beyond the sources (Atoms 0,
// ExtraAtoms extra): the configuration ExtraAtoms scores for extra, and
// the one to fit with its choice.
func WithExtraAtoms(cfg adapt.Config, extra int) adapt.Config {
	var set dictionary.Settings
	if cfg.Dictionary != nil {
		set = *cfg.Dictionary
	}
	set.Atoms, set.ExtraAtoms = 0, extra
	cfg.Dictionary = &set
	return cfg
}
