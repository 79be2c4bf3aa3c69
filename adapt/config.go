package adapt

import (
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dictionary"
)

// Config builds methods by name with the choices every method of one
// comparison shares, as dadil adapt and the benchmarks do: one seed, the
// settings of DaDiL's dictionary, and a cap on the rows of the methods whose
// transport plans grow with the product of the domains' sizes.
type Config struct {
	// Seed seeds every method's random choices.
	Seed uint64
	// Dictionary, when not nil, holds the settings of dadil-r and dadil-e
	// (a copy is made for every method, its Seed replaced by Seed); nil
	// selects New's.
	Dictionary *dictionary.Settings
	// GMM, when not nil, holds the settings of gmm-dadil and gmm-dadil-e:
	// New copies its Settings, TargetComponents, EM, MAP,
	// EnsembleTransport, SamplesPerClass, Dims and BalancedTarget (deep copies
	// of the pointers), never what a fit set; the seeds (GMMDaDiL.Seed,
	// Settings.Seed) and the classifier come from Seed and Classifier,
	// and BalancedTarget from Dictionary's when Dictionary is given (one
	// switch for both dictionaries' target terms). nil selects New's.
	GMM *GMMDaDiL
	// MaxRows, when positive, fits the DenseTransport methods on at most
	// MaxRows rows of every domain (Subsampled, seeded by Seed).
	MaxRows int
	// Classifier, when not nil, trains every method's final classifier
	// (NewClassifier); nil keeps each method's default.
	Classifier classify.Trainer
}

// New returns the method called name (one of Names) under the
// configuration.
func (c *Config) New(name string) (Method, error) {
	m, err := New(name, c.Seed)
	if err != nil {
		return nil, err
	}
	if d, ok := m.(*DaDiL); ok && c.Dictionary != nil {
		s := *c.Dictionary
		s.Seed = c.Seed
		d.Settings = &s
	}
	if g, ok := m.(*GMMDaDiL); ok {
		if c.GMM != nil {
			c.GMM.copySettings(g)
		}
		if c.Dictionary != nil {
			g.BalancedTarget = c.Dictionary.BalancedTarget
		}
	}
	if c.Classifier != nil {
		m.(classified).setClassifier(c.Classifier)
	}
	if c.MaxRows > 0 && DenseTransport(name) {
		m = &Subsampled{Method: m, MaxRows: c.MaxRows, Seed: c.Seed}
	}
	return m, nil
}

// Builder returns a function that builds a new method called name under
// the configuration at every call, for what refits a method (held-out
// validation, package selection's scorers); it returns nil for a name New
// does not know.
func (c *Config) Builder(name string) func() Method {
	return func() Method {
		m, err := c.New(name)
		if err != nil {
			return nil
		}
		return m
	}
}
