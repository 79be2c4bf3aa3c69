package matfile

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/testdata"
)

// openReal opens a file of the real benchmark data (see internal/testdata),
// skipping the test if it is absent.
func openReal(t *testing.T, rel string) *File {
	t.Helper()
	path := filepath.Join(testdata.Dir(t, rel), rel)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("skipping: real data file %s is not available (%v)", path, err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// classCounts returns how many labels equal 1, 2, ..., k.
func classCounts(labels []int, k int) []int {
	c := make([]int, k)
	for _, l := range labels {
		if l >= 1 && l <= k {
			c[l-1]++
		}
	}
	return c
}

// The features and labels of the Caltech-Office files are MATLAB double
// arrays stored as miUINT8 (MATLAB's compression of small integers); the
// README's "uint8" is the storage type that scipy.io.loadmat reports by
// default.
func TestRealOfficeCaltech(t *testing.T) {
	tests := []struct {
		file, features string
		storage        uint32
		n, d           int
		counts         []int
		maxFeature     float64 // checked to ±0.05 for DeCAF
	}{
		{"surf/amazon_SURF_L10.mat", "fts", miUINT8, 958, 800, []int{92, 82, 94, 99, 100, 100, 99, 100, 94, 98}, 0},
		{"surf/Caltech10_SURF_L10.mat", "fts", miUINT8, 1123, 800, []int{151, 110, 100, 138, 85, 128, 133, 94, 87, 97}, 0},
		{"surf/dslr_SURF_L10.mat", "fts", miUINT8, 157, 800, []int{12, 21, 12, 13, 10, 24, 22, 12, 8, 23}, 0},
		{"surf/webcam_SURF_L10.mat", "fts", miUINT8, 295, 800, []int{29, 21, 31, 27, 27, 30, 43, 30, 27, 30}, 0},
		{"decaf/webcam_decaf.mat", "feas", miDOUBLE, 295, 4096, []int{29, 21, 31, 27, 27, 30, 43, 30, 27, 30}, 64.8},
		{"decaf/dslr_decaf.mat", "feas", miDOUBLE, 157, 4096, []int{12, 21, 12, 13, 10, 24, 22, 12, 8, 23}, 81.0},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			f := openReal(t, filepath.Join("office-caltech10", tc.file))
			if !strings.HasPrefix(f.Header, "MATLAB 5.0 MAT-file, Platform: PCWIN") {
				t.Errorf("header %q", f.Header)
			}
			if got := varNames(f); !slices.Equal(got, []string{tc.features, "labels"}) {
				t.Fatalf("variables %v", got)
			}
			v, _ := f.Lookup(tc.features)
			if v.Class != "double" || v.typ != tc.storage || !slices.Equal(v.Dims, []int{tc.n, tc.d}) {
				t.Fatalf("%s: class %s stored as %s, dims %v", tc.features, v.Class, typeName(v.typ), v.Dims)
			}
			x, err := v.Matrix()
			if err != nil {
				t.Fatal(err)
			}
			maxV, nonzero := math.Inf(-1), 0
			for _, f := range x.RawMatrix().Data {
				if f < 0 || math.IsNaN(f) || (tc.storage == miUINT8 && f != math.Trunc(f)) {
					t.Fatalf("unexpected feature value %v", f)
				}
				maxV = max(maxV, f)
				if f != 0 {
					nonzero++
				}
			}
			if tc.maxFeature != 0 && math.Abs(maxV-tc.maxFeature) > 0.05 {
				t.Errorf("max feature %v, want about %v", maxV, tc.maxFeature)
			}
			if tc.storage == miDOUBLE {
				if frac := float64(nonzero) / float64(tc.n*tc.d); frac < 0.15 || frac > 0.19 {
					t.Errorf("%.3f of the features are non-zero, want about 0.17", frac)
				}
			}
			lv, _ := f.Lookup("labels")
			if lv.Class != "double" || !slices.Equal(lv.Dims, []int{tc.n, 1}) {
				t.Fatalf("labels: class %s dims %v", lv.Class, lv.Dims)
			}
			labels, err := lv.Ints()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.IsSorted(labels) || labels[0] != 1 || labels[len(labels)-1] != 10 {
				t.Errorf("labels not sorted 1..10")
			}
			if got := classCounts(labels, 10); !slices.Equal(got, tc.counts) {
				t.Errorf("class counts %v, want %v", got, tc.counts)
			}
		})
	}
}

func TestRealImageNames(t *testing.T) {
	for _, tc := range []struct {
		file string
		n    int
	}{
		{"amazon_SURF_L10_imgs.mat", 958},
		{"Caltech10_SURF_L10_imgs.mat", 1123},
		{"dslr_SURF_L10_imgs.mat", 157},
		{"webcam_SURF_L10_imgs.mat", 295},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f := openReal(t, filepath.Join("office-caltech10/surf", tc.file))
			v, err := f.Lookup("imgNames")
			if err != nil {
				t.Fatal(err)
			}
			if v.Class != "cell" || !slices.Equal(v.Dims, []int{tc.n, 1}) || v.Numeric() {
				t.Fatalf("class %s dims %v", v.Class, v.Dims)
			}
			_, err = v.Matrix()
			if want := "matfile: variable imgNames is a cell array, not a numeric array"; err == nil || err.Error() != want {
				t.Fatalf("got %v, want %q", err, want)
			}
			_, err = f.Lookup("fts")
			if want := "(the file has no numeric variables)"; err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("got %v", err)
			}
			// The cells are char rows: listed, not read.
			cells, err := v.Cells()
			if err != nil || len(cells) != tc.n {
				t.Fatalf("%d cells, %v", len(cells), err)
			}
			for _, c := range cells {
				if c.Class != "char" || c.Dims[0] != 1 || c.Numeric() {
					t.Fatalf("%s: class %s dims %v", c.Name, c.Class, c.Dims)
				}
			}
		})
	}
}

// landmineRows and landmineMines are the rows and mines of the 29 fields
// of the landmine data (see its README).
var (
	landmineRows  = []int{690, 690, 689, 508, 509, 509, 510, 511, 508, 509, 689, 688, 508, 510, 507, 445, 449, 448, 449, 449, 451, 454, 447, 449, 445, 448, 448, 454, 449}
	landmineMines = []int{40, 48, 39, 19, 22, 29, 29, 26, 31, 15, 38, 35, 27, 31, 17, 32, 27, 31, 30, 37, 33, 39, 17, 41, 31, 36, 36, 26, 42}
)

// The landmine file holds two uncompressed 1×29 cell arrays: feature, of
// N×9 double arrays, and label, of N×1 double arrays stored as miUINT8
// (the README's "uint8" is the storage type scipy reports).
func TestRealLandmine(t *testing.T) {
	f := openReal(t, "landmine/LandmineData.mat")
	if got := varNames(f); !slices.Equal(got, []string{"feature", "label"}) {
		t.Fatalf("variables %v", got)
	}
	rows, mines := 0, 0
	for k := range 29 {
		name := fmt.Sprintf("{%d}", k+1)
		x, err := f.Lookup("feature" + name)
		if err != nil {
			t.Fatal(err)
		}
		y, err := f.Lookup("label" + name)
		if err != nil {
			t.Fatal(err)
		}
		if x.Class != "double" || x.typ != miDOUBLE || !slices.Equal(x.Dims, []int{landmineRows[k], 9}) {
			t.Fatalf("%s: class %s stored as %s, dims %v", x.Name, x.Class, typeName(x.typ), x.Dims)
		}
		if y.Class != "double" || y.typ != miUINT8 || !slices.Equal(y.Dims, []int{landmineRows[k], 1}) {
			t.Fatalf("%s: class %s stored as %s, dims %v", y.Name, y.Class, typeName(y.typ), y.Dims)
		}
		m, err := x.Matrix()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range m.RawMatrix().Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%s: %v", x.Name, v)
			}
		}
		labels, err := y.Ints()
		if err != nil {
			t.Fatal(err)
		}
		if i := slices.IndexFunc(labels, func(l int) bool { return l != 0 && l != 1 }); i >= 0 {
			t.Fatalf("%s: label %d", y.Name, labels[i])
		}
		if got := classCounts(labels, 1)[0]; got != landmineMines[k] {
			t.Errorf("%s: %d mines, want %d", y.Name, got, landmineMines[k])
		}
		rows += len(labels)
		mines += classCounts(labels, 1)[0]
	}
	if rows != 14820 || mines != 904 {
		t.Fatalf("%d rows and %d mines, want 14820 and 904", rows, mines)
	}
	if _, err := f.Lookup("feature{30}"); err == nil || !strings.HasSuffix(err.Error(), "variable feature has 29 cells; there is no feature{30}") {
		t.Fatalf("feature{30}: %v", err)
	}
}

// The CWRU files hold uncompressed miMATRIX elements. The RPM variables
// are 1×1 double arrays stored as miUINT16 in a small data element (the
// README's "uint16" is again the storage type).
func TestRealCWRU(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping 80 MB of real data in short mode")
	}
	tests := []struct {
		file       string
		id         int
		rpm, n     int
		noBaseline bool // whether the file lacks the BA channel
	}{
		{"12k_DE/106.mat", 106, 1772, 121991, false},
		{"12k_DE/107.mat", 107, 1748, 122136, false},
		{"12k_DE/108.mat", 108, 1721, 122917, false},
		{"12k_DE/170.mat", 170, 1774, 121846, false},
		{"12k_DE/171.mat", 171, 1752, 121846, false},
		{"12k_DE/172.mat", 172, 1728, 121701, false},
		{"12k_DE/210.mat", 210, 1774, 121556, false},
		{"12k_DE/211.mat", 211, 1752, 121846, false},
		{"12k_DE/212.mat", 212, 1728, 121991, false},
		{"12k_DE/119.mat", 119, 1772, 121410, false},
		{"12k_DE/120.mat", 120, 1748, 121556, false},
		{"12k_DE/121.mat", 121, 1722, 121556, false},
		{"12k_DE/186.mat", 186, 1772, 122136, false},
		{"12k_DE/187.mat", 187, 1749, 121991, false},
		{"12k_DE/188.mat", 188, 1724, 122136, false},
		{"12k_DE/223.mat", 223, 1774, 121701, false},
		{"12k_DE/224.mat", 224, 1754, 122136, false},
		{"12k_DE/225.mat", 225, 1729, 122136, false},
		{"12k_DE/131.mat", 131, 1773, 122426, false},
		{"12k_DE/132.mat", 132, 1750, 121410, false},
		{"12k_DE/133.mat", 133, 1725, 122571, false},
		{"12k_DE/198.mat", 198, 1772, 122136, false},
		{"12k_DE/199.mat", 199, 1749, 121846, false},
		{"12k_DE/200.mat", 200, 1723, 121991, false},
		{"12k_DE/235.mat", 235, 1771, 121991, false},
		{"12k_DE/236.mat", 236, 1748, 122281, false},
		{"12k_DE/237.mat", 237, 1721, 121991, false},
		{"normal/97.mat", 97, 1796, 243938, true},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			f := openReal(t, filepath.Join("cwru", tc.file))
			p := fmt.Sprintf("X%03d", tc.id)
			want := []string{p + "_DE_time", p + "_FE_time", p + "_BA_time", p + "RPM"}
			if tc.noBaseline {
				want = slices.Delete(want, 2, 3)
			}
			if got := varNames(f); !slices.Equal(got, want) {
				t.Fatalf("variables %v, want %v", got, want)
			}
			for _, name := range want[:len(want)-1] {
				v, _ := f.Lookup(name)
				if v.Class != "double" || v.typ != miDOUBLE || !slices.Equal(v.Dims, []int{tc.n, 1}) {
					t.Fatalf("%s: class %s dims %v", name, v.Class, v.Dims)
				}
				x, err := v.Vector()
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range x {
					if math.IsNaN(s) || math.Abs(s) > 100 {
						t.Fatalf("%s: implausible sample %v", name, s)
					}
				}
			}
			v, _ := f.Lookup(p + "RPM")
			if v.Class != "double" || v.typ != miUINT16 || !slices.Equal(v.Dims, []int{1, 1}) {
				t.Fatalf("RPM: class %s stored as %s, dims %v", v.Class, typeName(v.typ), v.Dims)
			}
			rpm, err := v.Ints()
			if err != nil || !slices.Equal(rpm, []int{tc.rpm}) {
				t.Fatalf("RPM %v, %v, want %d", rpm, err, tc.rpm)
			}
		})
	}
}

func TestRealCWRUFirstSamples(t *testing.T) {
	// Values printed by scipy.io.loadmat for 106.mat.
	f := openReal(t, "cwru/12k_DE/106.mat")
	v, _ := f.Lookup("X106_DE_time")
	m, err := v.Matrix()
	if err != nil {
		t.Fatal(err)
	}
	if r, c := m.Dims(); r != 121991 || c != 1 {
		t.Fatalf("dims %d×%d", r, c)
	}
	for i, want := range []float64{-0.27760164, -0.04434479} {
		if got := m.At(i, 0); math.Abs(got-want) > 1e-8 {
			t.Errorf("sample %d = %v, want %v", i, got, want)
		}
	}
}
