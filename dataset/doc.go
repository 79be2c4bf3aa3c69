// Package dataset reads the domains of a domain-adaptation problem and
// prepares them for learning: it maps labels to class indices, scales
// features and draws mini-batches.
//
// # Domains and files
//
// A Domain is one domain's n×d feature matrix, one row per sample, with
// optional integer labels. Read loads a domain from a file, choosing the
// reader by the file name extension:
//
//   - .csv: a header row naming the columns, then one row per sample. The
//     label column (by default "label"), if present, holds integers; every
//     other column is a numeric feature. See ReadCSV.
//   - .npy: a 2-D NumPy array of features; the domain is unlabeled.
//   - .npz: a NumPy archive with a 2-D features array (by default "X") and
//     optionally a labels vector (by default "y").
//   - .mat: a MATLAB level-5 MAT-file (see package matfile) with a 2-D
//     features variable (by default the first of "feas", "fts" and "X")
//     and optionally a labels vector (by default "labels" or "y").
//
// The .npz and .mat readers decompress only the arrays they read: other
// members and variables, whatever size they declare, cost nothing.
//
// A .mat file may store one domain per cell of a cell array, as the
// landmine data does (feature{m} the N_m×9 features of field m, label{m}
// its labels). A variable name may then select one cell, with MATLAB's
// notation and a linear index from 1 in column-major order:
//
//	d, err := dataset.Read("LandmineData.mat", &dataset.ReadOptions{
//		FeaturesVar: []string{"feature{3}"},
//		LabelsVar:   []string{"label{3}"},
//	})
//
// which is what the dadil command does for
//
//	dadil fit --source LandmineData.mat --features-var 'feature{1}' --labels-var 'label{1}' …
//
// (quote the braces for the shell). ReadMATCells reads every cell pair of
// such a file, one File per cell, named "LandmineData{1}", "LandmineData{2}", ….
//
// Every reader rejects empty data (no rows or no features), NaN and
// infinite features, labels that are not integers and a number of labels
// different from the number of rows. Errors name the file and, where it
// applies, the line or row and the column at fault, for example
//
//	dataset: src.csv: line 17, column "f3": "abc" is not a number
//	dataset: x.mat: features: row 3, column 7 is NaN (rows and columns count from 1)
//
// Labels are the user's values, any integers: class indices are assigned
// by Classes, which sorts the distinct label values of the labeled
// domains, so class k stands for label Classes.Values[k].
//
// # Scaling
//
// FitScaler fits a per-feature affine map x' = (x − Offset)·Scale over all
// rows of the given domains together: min-max scaling to [0, 1] (the
// protocol of the Caltech-Office experiments of DaDiL and WBT) or
// standardisation to zero mean and unit variance. A constant feature gets
// Scale 1, as in scikit-learn, so min-max and standard scaling both map it
// to 0 on the fitted data and never produce NaN or infinite values.
//
// # Sampling
//
// BalancedBatch and UniformBatch draw the row indices of mini-batches from
// a caller-supplied *rand.Rand (math/rand/v2), so results are reproducible
// for a given seed. The package has no global state.
//
// Errors returned by this package are prefixed with "dataset: ".
package dataset
