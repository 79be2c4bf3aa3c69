package dictionary

// Paper returns the settings of the paper's Caltech-Office experiments
// (appendix, hyper-parameter table) seeded by seed: K = 8 atoms, n = 1000
// support points and mini-batches of n_b = 200 (the paper's values, for ten
// classes; dadil fit --paper keeps the defaults of 100 and 20 per class),
// η = 0.1, N_iter = 10 fixed epochs, atoms initialised N(0, I)
// with the learning rate in data units (Algorithm 2, line 1), one atom
// batch per domain (Algorithm 2, lines 10–13), α moved by Adam on its raw
// gradient as in the authors' implementation, and the DaDiL-R and DaDiL-E
// classifiers trained on the argmax of the labels as in the authors'
// demonstration, without a transport step.
func Paper(seed uint64) *Settings {
	return &Settings{
		Atoms: 8, Samples: 1000, Batch: 200, LearningRate: 0.1, Epochs: 10, PlateauTol: -1,
		Init: InitGaussian, FeatureScale: ScaleNone,
		RawAlphaGradient: true, HardLabels: true, BalancedTarget: true, Seed: seed,
		Transport: TransportNone, EnsembleTransport: TransportNone,
	}
}

// PaperCWRU returns the settings of the paper's CWRU experiment (appendix,
// hyper-parameter table) with K atoms — 8 for DaDiL-R, 3 for DaDiL-E —
// seeded by seed: as Paper, but η = 0.05 and N_iter = 60 epochs.
func PaperCWRU(atoms int, seed uint64) *Settings {
	s := Paper(seed)
	s.Atoms, s.LearningRate, s.Epochs = atoms, 0.05, 60
	return s
}
