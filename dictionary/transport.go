package dictionary

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/clip"
	"github.com/dadil/dadil/internal/linalg"
	"github.com/dadil/dadil/ot"
)

// Transport selects a last step of DaDiL-R or DaDiL-E towards the target
// rows: the residual shift between the labeled points a classifier trains
// on and the target, which the paper's Table 3 removes for WBT by "an
// additional transport step towards Q_T" (its column T).
type Transport int

const (
	// TransportAuto selects the predictor's default: TransportSources for
	// DaDiL-R (Settings.Transport), whose classifier then learns from
	// every labeled row moved towards the target beside the
	// reconstruction B(α_T; P), and TransportBarycenter for DaDiL-E
	// (Settings.EnsembleTransport), whose atoms are not fitted to the
	// target: each atom stays near the domains that shaped it, and with K
	// equal to the number of sources and atoms started on them every atom
	// classifier is close to a source classifier, which made DaDiL-E no
	// better than training on the sources. Moving each atom onto the
	// reconstruction keeps one classifier per atom, with the atom's
	// labels, on points fitted to the target (see docs/defaults.md for the
	// measurements of both).
	TransportAuto Transport = iota
	// TransportNone trains DaDiL-R on the reconstruction and DaDiL-E on
	// the atoms, as the paper does.
	TransportNone
	// TransportMap moves the labeled points (the reconstruction for
	// DaDiL-R, every atom for DaDiL-E) onto the target rows by the
	// barycentric map of an exact optimal plan, x_i ↦ (1/a_i) Σ_j π_ij x_T,j
	// (paper eq. 5), and trains the classifiers on the moved points with
	// their labels.
	TransportMap
	// TransportLabels labels the target rows through an exact optimal plan
	// from the labeled points, y_T,j = (1/b_j) Σ_i π_ij y_i (label
	// propagation), and trains the classifiers on the target rows with
	// those labels.
	TransportLabels
	// TransportBarycenter, for DaDiL-E only, moves every atom onto the
	// target's reconstruction B(α_T; P) through the plan π^(k) of the
	// barycenter (Algorithm 1): atom k's point i goes to
	// (1/a_i) Σ_j π^(k)_ij x_B,j, with its own label. Each atom classifier
	// then sees the reconstruction's points with the atom's labels; no
	// plan to the target rows is solved. For DaDiL-R it is
	// TransportNone.
	TransportBarycenter
	// TransportSources, for DaDiL-R only, trains its classifier on the
	// reconstruction B(α_T; P) and on the labeled sources' rows moved along
	// the dictionary towards the target, with their own labels, each half
	// of the weight (the rows' classes weighing equally, as the
	// reconstruction's do). A row of source ℓ moves by the displacement
	// Σ_k (α_T,k − α_ℓ,k) T_k(j) between the source's and the target's
	// points built on the same atom points T_k(j), those of the
	// reconstruction's point j it is matched with, less its class's mean
	// offset from those points (see movedSources). The classifier then
	// learns from every labeled row, not only from the n points of the
	// reconstruction. FitModel reads the sources; NewModel,
	// which has only the dictionary, trains on the reconstruction alone.
	TransportSources
)

var transportNames = [...]string{TransportAuto: "auto", TransportNone: "none", TransportMap: "map", TransportLabels: "labels", TransportBarycenter: "barycenter", TransportSources: "sources"}

// String returns "auto", "none", "map", "labels", "barycenter" or
// "sources".
func (t Transport) String() string {
	if t >= 0 && int(t) < len(transportNames) {
		return transportNames[t]
	}
	return fmt.Sprintf("Transport(%d)", int(t))
}

// MarshalText implements encoding.TextMarshaler.
func (t Transport) MarshalText() ([]byte, error) {
	if t < 0 || int(t) >= len(transportNames) {
		return nil, fmt.Errorf("dictionary: unknown transport %d", int(t))
	}
	return []byte(t.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *Transport) UnmarshalText(b []byte) error {
	i := slices.Index(transportNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("dictionary: unknown transport %s (want auto, none, map, labels, barycenter or sources)", clip.Bytes(b))
	}
	*t = Transport(i)
	return nil
}

// toTarget reports whether the transport t reads the target rows.
func toTarget(t Transport) bool { return t == TransportMap || t == TransportLabels }

// DefaultTransportRows is the default of Settings.TransportRows.
const DefaultTransportRows = 4000

// transportRows returns the target rows the transport step uses: all of
// them, or a uniform draw without replacement of Settings.TransportRows of
// them (in their order), seeded by seed.
func (d *Dictionary) transportRows(XT *mat.Dense, seed uint64) *mat.Dense {
	n, _ := XT.Dims()
	if idx := d.drawnRows(n, seed, 0x7a29); idx != nil {
		return linalg.Rows(XT, idx)
	}
	return XT
}

// transportLimit returns the most rows of one domain a transport step
// reads: Settings.TransportRows, DefaultTransportRows for 0, and
// math.MaxInt (every row) for a negative value.
func (s *Settings) transportLimit() int {
	switch {
	case s.TransportRows == 0:
		return DefaultTransportRows
	case s.TransportRows < 0:
		return math.MaxInt
	}
	return s.TransportRows
}

// drawnRows returns nil when Settings.TransportRows keeps all n rows, else
// a uniform draw without replacement of TransportRows of them, in their
// order, from the PCG stream (seed, stream).
func (d *Dictionary) drawnRows(n int, seed, stream uint64) []int {
	limit := d.Settings.transportLimit()
	if n <= limit {
		return nil
	}
	idx := rand.New(rand.NewPCG(seed, stream)).Perm(n)[:limit]
	slices.Sort(idx)
	return idx
}

// transport returns the points and soft labels a classifier trains on
// under the transport kind: X and Y themselves, X moved onto the target
// rows XT with the labels Y, or XT with the labels Y propagated. The plan
// is an exact one between uniform weights for the squared Euclidean cost of
// the features.
func (d *Dictionary) transport(kind Transport, X, Y, XT *mat.Dense) (*mat.Dense, *mat.Dense, error) {
	if !toTarget(kind) || XT == nil {
		return X, Y, nil
	}
	var C mat.Dense
	if err := ot.SqEuclidean(&C, X, XT); err != nil {
		return nil, nil, fmt.Errorf("dictionary: transport: %w", err)
	}
	res, err := ot.EMD(nil, nil, &C)
	if err != nil {
		return nil, nil, fmt.Errorf("dictionary: transport: %w", err)
	}
	if kind == TransportMap {
		var Xm mat.Dense
		if err := res.Plan.BarycentricMap(&Xm, XT); err != nil {
			return nil, nil, fmt.Errorf("dictionary: transport: %w", err)
		}
		return &Xm, Y, nil
	}
	var Yt mat.Dense // TransportLabels
	if err := res.Plan.T().BarycentricMap(&Yt, Y); err != nil {
		return nil, nil, fmt.Errorf("dictionary: transport: %w", err)
	}
	return XT, normalizeRows(&Yt), nil
}
