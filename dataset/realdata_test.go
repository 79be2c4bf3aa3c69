package dataset

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/testdata"
)

// officeDir returns the Caltech-Office 10 folder of the real benchmark data
// (see internal/testdata), skipping the test if it is absent.
func officeDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(testdata.Dir(t, "office-caltech10"), "office-caltech10")
}

// readReal reads a file under officeDir, skipping the test if it is
// absent.
func readReal(t *testing.T, rel string, opt *ReadOptions) *File {
	t.Helper()
	path := filepath.Join(officeDir(t), rel)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("skipping: real data file %s is not available (%v)", path, err)
	}
	d, err := Read(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// officeFiles lists the Caltech-Office files with their sizes and class
// counts (labels 1..10) from the README.
var officeFiles = []struct {
	file   string
	n, d   int
	counts []int
}{
	{"surf/amazon_SURF_L10.mat", 958, 800, []int{92, 82, 94, 99, 100, 100, 99, 100, 94, 98}},
	{"surf/Caltech10_SURF_L10.mat", 1123, 800, []int{151, 110, 100, 138, 85, 128, 133, 94, 87, 97}},
	{"surf/dslr_SURF_L10.mat", 157, 800, []int{12, 21, 12, 13, 10, 24, 22, 12, 8, 23}},
	{"surf/webcam_SURF_L10.mat", 295, 800, []int{29, 21, 31, 27, 27, 30, 43, 30, 27, 30}},
	{"decaf/webcam_decaf.mat", 295, 4096, []int{29, 21, 31, 27, 27, 30, 43, 30, 27, 30}},
	{"decaf/dslr_decaf.mat", 157, 4096, []int{12, 21, 12, 13, 10, 24, 22, 12, 8, 23}},
}

func TestRealOfficeCaltech(t *testing.T) {
	for _, tc := range officeFiles {
		t.Run(tc.file, func(t *testing.T) {
			d := readReal(t, tc.file, nil)
			if r, c := d.X.Dims(); r != tc.n || c != tc.d {
				t.Fatalf("features %d×%d, want %d×%d", r, c, tc.n, tc.d)
			}
			if d.Name != baseName(tc.file) {
				t.Errorf("name %q", d.Name)
			}
			counts := make([]int, 10)
			for _, l := range d.Labels {
				if l < 1 || l > 10 {
					t.Fatalf("label %d outside 1..10", l)
				}
				counts[l-1]++
			}
			if !slices.Equal(counts, tc.counts) {
				t.Errorf("class counts %v, want %v", counts, tc.counts)
			}
			c, err := NewClasses(d)
			if err != nil || !slices.Equal(c.Values, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) {
				t.Fatalf("classes %v, %v", c, err)
			}
			u := readReal(t, tc.file, &ReadOptions{Unlabeled: true})
			if u.Labels != nil {
				t.Fatal("Unlabeled read labels")
			}
		})
	}
}

// TestRealSURFMinMax scales the four SURF domains together to [0, 1], the
// protocol of the Caltech-Office experiments.
func TestRealSURFMinMax(t *testing.T) {
	var domains []*File
	for _, tc := range officeFiles[:4] {
		domains = append(domains, readReal(t, tc.file, nil))
	}
	if err := CheckCompatible(domains...); err != nil {
		t.Fatal(err)
	}
	s, err := FitScaler(ScaleMinMax, domains...)
	if err != nil {
		t.Fatal(err)
	}
	constant := 0
	for _, sc := range s.Scale {
		if sc == 1 {
			constant++
		}
	}
	hit0, hit1 := make([]bool, 800), make([]bool, 800)
	for _, d := range domains {
		sd, err := s.TransformFile(d)
		if err != nil {
			t.Fatal(err)
		}
		r, c := sd.X.Dims()
		for i := range r {
			for j := range c {
				v := sd.X.At(i, j)
				if v < 0 || v > 1 {
					t.Fatalf("%s: scaled feature (%d, %d) = %v outside [0, 1]", d.Name, i, j, v)
				}
				hit0[j] = hit0[j] || v == 0
				hit1[j] = hit1[j] || v > 1-1e-15
			}
		}
	}
	for j := range 800 {
		if !hit0[j] || !hit1[j] && s.Scale[j] != 1 {
			t.Fatalf("feature %d does not span [0, 1]", j)
		}
	}
	t.Logf("%d constant features", constant)

	classes, err := NewClasses(domains...)
	if err != nil || classes.Len() != 10 {
		t.Fatalf("classes %v, %v", classes, err)
	}
}

func TestRealIncompatible(t *testing.T) {
	surf := readReal(t, "surf/webcam_SURF_L10.mat", nil)
	decaf := readReal(t, "decaf/webcam_decaf.mat", nil)
	err := CheckCompatible(surf, decaf)
	errContains(t, err, "feature dimensions differ: "+filepath.Join(officeDir(t), "surf/webcam_SURF_L10.mat")+" has 800 features, "+
		filepath.Join(officeDir(t), "decaf/webcam_decaf.mat")+" has 4096")
}

func TestRealImageNamesFile(t *testing.T) {
	path := filepath.Join(officeDir(t), "surf/dslr_SURF_L10_imgs.mat")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("skipping: real data file %s is not available (%v)", path, err)
	}
	_, err := Read(path, nil)
	errContains(t, err, "no features variable (tried feas, fts, X; the file has no numeric variables)")
	_, err = Read(path, &ReadOptions{FeaturesVar: []string{"imgNames"}})
	errContains(t, err, "variable imgNames is a cell array, not a numeric array")
}

func TestRealCWRUSignal(t *testing.T) {
	path := filepath.Join(testdata.Dir(t, "cwru/12k_DE/106.mat"), "cwru/12k_DE/106.mat")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("skipping: real data file %s is not available (%v)", path, err)
	}
	d, err := ReadMAT(path, &ReadOptions{FeaturesVar: []string{"X106_DE_time"}})
	if err != nil {
		t.Fatal(err)
	}
	if r, c := d.X.Dims(); r != 121991 || c != 1 || d.Labels != nil {
		t.Fatalf("got %d×%d, labels %v", r, c, d.Labels != nil)
	}
}

// TestRealLandmine reads the landmine data, 29 domains stored as the cells
// of two 1×29 cell arrays (see its README).
func TestRealLandmine(t *testing.T) {
	path := filepath.Join(testdata.Dir(t, "landmine/LandmineData.mat"), "landmine/LandmineData.mat")
	files, err := ReadMATCells(path, "feature", "label")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 29 {
		t.Fatalf("%d domains, want 29", len(files))
	}
	rows, mines := 0, 0
	for _, d := range files {
		r, c := d.X.Dims()
		if c != 9 || len(d.Labels) != r {
			t.Fatalf("%s: %d×%d, %d labels", d.Name, r, c, len(d.Labels))
		}
		for _, l := range d.Labels {
			if l != 0 && l != 1 {
				t.Fatalf("%s: label %d", d.Name, l)
			}
			mines += l
		}
		rows += r
	}
	if rows != 14820 || mines != 904 {
		t.Fatalf("%d rows, %d mines; want 14820 and 904", rows, mines)
	}
	if err := CheckCompatible(files...); err != nil {
		t.Fatal(err)
	}
	if files[0].Name != "LandmineData{1}" || files[28].Name != "LandmineData{29}" {
		t.Errorf("names %q … %q", files[0].Name, files[28].Name)
	}
	// One field, as the CLI reads it: --features-var 'feature{1}'
	// --labels-var 'label{1}'.
	d, err := Read(path, &ReadOptions{FeaturesVar: []string{"feature{1}"}, LabelsVar: []string{"label{1}"}})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := d.X.Dims(); r != 690 || !mat.Equal(d.X, files[0].X) || !slices.Equal(d.Labels, files[0].Labels) {
		t.Fatalf("feature{1}: %d rows", r)
	}
	_, err = Read(path, nil)
	errContains(t, err, "no features variable (tried feas, fts, X; the file has no numeric variables); it has cell arrays feature, label: name one cell, such as feature{1}")
}
