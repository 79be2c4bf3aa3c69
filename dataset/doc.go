// Package dataset holds the domain-adaptation problem every package of the
// module learns from, reads users' files into it and prepares them for
// learning: it maps labels to class indices, completes missing values,
// scales features and draws mini-batches.
//
// # Problems and domains
//
// A Problem is labeled source domains, the unlabeled rows of one target
// domain, and optionally labeled target rows (Test) that only score
// predictions. A Domain is one domain's n×d feature matrix with, for a
// labeled domain, the class index of every row. Problem.Domains lists the
// domains in the order a dictionary learns them, the target last
// (TargetIndex); Problem.HoldOut makes the problem of held-out-source
// validation, Problem.Subsample a smaller one.
//
// Load reads a user's problem from files: it reads every file (Read),
// checks that they are compatible, takes the classes from the sources'
// labels, applies a missing-value policy (Missing: impute with the
// sources' means, drop the features, or refuse), fits the scaling over all
// files, and encodes the labels. Prepare does the same from file contents
// already in memory. The Loaded result keeps what a model needs to apply
// to new data: the label values, the imputer and the scaler.
//
// # Files
//
// A File is the content of one data file as read: features, the user's
// label values and, for CSV files, the columns' names. Read loads one,
// choosing the reader by the file name extension:
//
//   - .csv (also comma-separated .txt and .data files): a header row naming
//     the columns (or none, ReadOptions.NoHeader: columns are then named
//     1, 2, …), then one row per sample. The label column (by default
//     "label"), if present, holds integers; every other column is a numeric
//     feature. With ReadOptions.AllowMissing, the cells "", "?", "NA",
//     "N/A", "NaN" and "null" are missing values. See ReadCSV.
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
// Every reader rejects empty data (no rows or no features), infinite
// features, NaN features unless missing values are allowed, labels that
// are not integers and a number of labels different from the number of
// rows. Errors name the file and, where it
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
// standardisation to zero mean and unit variance (the default of dadil's
// commands, --scale standard). A constant feature gets Scale 1, as in
// scikit-learn, so min-max and standard scaling both map it to 0 on the
// fitted data and never produce NaN or infinite values.
//
// # Sampling
//
// BalancedBatch and UniformBatch draw the row indices of mini-batches from
// a caller-supplied *rand.Rand (math/rand/v2), so results are reproducible
// for a given seed. The package has no global state.
//
// Errors returned by this package are prefixed with "dataset: ".
package dataset
