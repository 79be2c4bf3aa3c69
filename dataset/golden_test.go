package dataset

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/golden"
)

// TestReadCSVGolden pins what readCSVNamed returns, data or error, for a
// table of inputs and options to testdata/csv.golden.
func TestReadCSVGolden(t *testing.T) {
	var b strings.Builder
	for _, tc := range []struct {
		in  string
		opt ReadOptions
	}{
		{"a,b,label\n1,2,0\n3,4.5,1\n", ReadOptions{}},
		{"\xef\xbb\xbf a , b\n1, 2\n\n  \n-3e2,\" 4\"\n", ReadOptions{}},
		{"x,y,cls\n1,2,3.0\n4,5,1\n", ReadOptions{LabelColumn: "cls"}},
		{"x,y,label\n1,2,oops\n", ReadOptions{Unlabeled: true}},
		{"x,y\n1,2\n", ReadOptions{LabelColumn: "cls", LabelsOptional: true}},
		{"1,2,3\n4,5,6\n", ReadOptions{NoHeader: true, LabelColumn: "3"}},
		{"1,2\n", ReadOptions{NoHeader: true}},
		{"a,b\n1,\n,2\n", ReadOptions{AllowMissing: true}},
		{"a,b\n1,NaN\n", ReadOptions{AllowMissing: true}},
		{"", ReadOptions{}},
		{"", ReadOptions{NoHeader: true}},
		{"a,b\n", ReadOptions{}},
		{"\n", ReadOptions{NoHeader: true}},
		{"a,,c\n1,2,3\n", ReadOptions{}},
		{"a,b,a\n1,2,3\n", ReadOptions{}},
		{"a,b\n1,2\n", ReadOptions{LabelColumn: "y"}},
		{"label\n1\n", ReadOptions{}},
		{"a,b\n1,2\n3\n", ReadOptions{}},
		{"a,label\n1,2.5\n", ReadOptions{}},
		{"a,label\n1,x\n", ReadOptions{}},
		{"a,b\n1,abc\n", ReadOptions{}},
		{"a,b\n1,Inf\n", ReadOptions{}},
		{"a,b\n1,\"2\n", ReadOptions{}},
		{"a,b\n1,2\n3,4\n5,6,7\n", ReadOptions{}},
	} {
		x, labels, names, err := readCSVNamed(strings.NewReader(tc.in), tc.opt)
		fmt.Fprintf(&b, "%q %+v:\n", tc.in, tc.opt)
		if err != nil {
			fmt.Fprintf(&b, "  error: %v\n", err)
			continue
		}
		r, c := x.Dims()
		fmt.Fprintf(&b, "  %d×%d %v, labels %v (nil %v), names %q\n", r, c, x.RawMatrix().Data, labels, labels == nil, names)
	}
	golden.Check(t, "csv.golden", b.String())
}
