package dataset

import (
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestNewClasses(t *testing.T) {
	x := newDense(1, 1, 0)
	tests := []struct {
		name    string
		domains []*File
		want    []int
		wantErr string
	}{
		{"one domain", []*File{{X: x, Labels: []int{3, 1, 3, 2}}}, []int{1, 2, 3}, ""},
		{"union, unlabeled skipped", []*File{{X: x, Labels: []int{10, -5}}, {X: x}, {X: x, Labels: []int{7, 10}}}, []int{-5, 7, 10}, ""},
		{"none labeled", []*File{{X: x}, {X: x}}, nil, "dataset: no labeled domain to take the classes from"},
		{"no domains", nil, nil, "no labeled domain"},
		{"empty labels", []*File{{X: x, Labels: []int{}}}, nil, "dataset: the labeled domains have no labels"},
		{"nil domain", []*File{{X: x, Labels: []int{1}}, nil}, nil, "dataset: domain 1 is nil"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewClasses(tc.domains...)
			if tc.wantErr != "" {
				errContains(t, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.Values, tc.want) || c.Len() != len(tc.want) {
				t.Fatalf("got %v, want %v", c.Values, tc.want)
			}
		})
	}
}

func TestClassesEncodeDecode(t *testing.T) {
	c := &Classes{Values: []int{-1, 4, 10}}
	tests := []struct {
		labels  []int
		want    []int
		wantErr string
	}{
		{[]int{10, -1, 4, 4}, []int{2, 0, 1, 1}, ""},
		{nil, []int{}, ""},
		{[]int{4, 5}, nil, "dataset: label 5 (element 1) is not one of the classes {-1, 4, 10}"},
	}
	for _, tc := range tests {
		got, err := c.Encode(tc.labels)
		if tc.wantErr != "" {
			errContains(t, err, tc.wantErr)
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Fatalf("Encode(%v) = %v, %v, want %v", tc.labels, got, err, tc.want)
		}
		for i, k := range got {
			if c.Decode(k) != tc.labels[i] {
				t.Fatalf("Decode(%d) = %d, want %d", k, c.Decode(k), tc.labels[i])
			}
		}
	}
	for _, tc := range []struct {
		label, idx int
		ok         bool
	}{{-1, 0, true}, {4, 1, true}, {10, 2, true}, {0, 0, false}, {11, 0, false}, {-2, 0, false}} {
		idx, ok := c.Index(tc.label)
		if ok != tc.ok || ok && idx != tc.idx {
			t.Errorf("Index(%d) = %d, %v", tc.label, idx, ok)
		}
	}

	many := &Classes{}
	for i := range 30 {
		many.Values = append(many.Values, i*2)
	}
	_, err := many.Encode([]int{1})
	errContains(t, err, "is not one of the classes (30 values from 0 to 58)")
}

func TestOneHot(t *testing.T) {
	c := &Classes{Values: []int{1, 2, 3}}
	got := c.OneHot([]int{2, 0, 1, 2})
	want := mat.NewDense(4, 3, []float64{0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1})
	if !mat.Equal(got, want) {
		t.Fatalf("got\n%v", mat.Formatted(got))
	}
	if m := c.OneHot(nil); !m.IsEmpty() {
		t.Fatal("OneHot(nil) not empty")
	}
	if m := (&Classes{}).OneHot([]int{0}); !m.IsEmpty() {
		t.Fatal("OneHot without classes not empty")
	}
	defer func() {
		r := recover()
		if s, ok := r.(string); !ok || !strings.Contains(s, "class index 3 out of range [0, 3)") {
			t.Fatalf("recovered %v", r)
		}
	}()
	c.OneHot([]int{3})
}

func TestCheckCompatible(t *testing.T) {
	a := &File{Name: "amazon", Path: "amazon_SURF_L10.mat", X: newDense(2, 3, 1, 2, 3, 4, 5, 6), Labels: []int{1, 2}}
	b := &File{Name: "b", X: newDense(1, 3, 1, 2, 3)}
	w := &File{Path: "webcam_decaf.mat", X: newDense(1, 4, 1, 2, 3, 4)}
	tests := []struct {
		name    string
		domains []*File
		want    string
	}{
		{"ok", []*File{a, b}, ""},
		{"one", []*File{w}, ""},
		{"none", nil, "dataset: no domains"},
		{"nil", []*File{a, nil}, "dataset: domain 1 is nil"},
		{"dims", []*File{a, b, w}, "dataset: feature dimensions differ: amazon_SURF_L10.mat has 3 features, webcam_decaf.mat has 4"},
		{"empty", []*File{a, {Name: "t", X: &mat.Dense{}}}, "dataset: t: no data"},
		{"nil X", []*File{{}}, "dataset: domain 0: no data"},
		{"labels", []*File{{Name: "s", X: newDense(2, 1, 1, 2), Labels: []int{1}}}, "dataset: s: 1 labels for 2 rows of features"},
		{"names agree", []*File{named("s.csv", "f1", "f2", "f3"), b, named("t.csv", "f1", "f2", "f3")}, ""},
		{"names reordered", []*File{named("s.csv", "f1", "f2", "f3"), b, named("t.csv", "f1", "f3", "f2")}, `dataset: feature columns differ: column 2 is "f2" in s.csv but "f3" in t.csv`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckCompatible(tc.domains...)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			errContains(t, err, tc.want)
		})
	}
}

// named returns a one-row domain read from path with the given feature
// names.
func named(path string, names ...string) *File {
	return &File{Path: path, X: mat.NewDense(1, len(names), nil), Features: names}
}

// TestFeatureMismatch: the first column named differently, and −1 when the
// names agree or cannot be compared.
func TestFeatureMismatch(t *testing.T) {
	for _, tc := range []struct {
		want, got []string
		j         int
	}{
		{[]string{"a", "b", "c"}, []string{"a", "b", "c"}, -1},
		{[]string{"a", "b", "c"}, []string{"a", "c", "b"}, 1},
		{[]string{"a", "b"}, []string{"x", "b"}, 0},
		{nil, []string{"a"}, -1},
		{[]string{"a"}, nil, -1},
		{[]string{"a"}, []string{"a", "b"}, -1},
	} {
		if j := FeatureMismatch(tc.want, tc.got); j != tc.j {
			t.Errorf("FeatureMismatch(%q, %q) = %d, want %d", tc.want, tc.got, j, tc.j)
		}
	}
}
