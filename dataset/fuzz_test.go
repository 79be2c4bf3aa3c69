package dataset

import (
	"math"
	"strings"
	"testing"
)

func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{
		"f1,f2,label\n1,2,0\n3.5,-4e-2,1\n",
		"a,b\n1,2\n3,4\n",
		" a ,  \"b\",label\n 1 ,\" 2\", 3 \n",
		"a,label\r\n1,2\r\n\r\n",
		"\xef\xbb\xbfa,label\n1,2\n",
		"a,label\n1,3.0\n2,-1e1\n",
		"label\n1\n",
		",a,b\n0,1,2\n",
		"a,b\n1,NaN\n",
		"a,\"b\nc\",label\n1,2,3\n",
		"a,a\n1,2\n",
		"a,label\n1,2.5\n",
		"a,b,c\n1,2\n",
		"",
		"a,b\n1,0x1p3\n",
	} {
		f.Add(s, false, "")
		f.Add(s, true, "")
		f.Add(s, false, "b")
	}
	f.Fuzz(func(t *testing.T, text string, unlabeled bool, labelCol string) {
		opt := ReadOptions{Unlabeled: unlabeled, LabelColumn: labelCol}
		x, labels, err := readCSV(strings.NewReader(text), opt)
		if err != nil {
			if x != nil || labels != nil || err.Error() == "" {
				t.Fatalf("results with error %v", err)
			}
			return
		}
		r, c := x.Dims()
		if r == 0 || c == 0 {
			t.Fatalf("empty %d×%d matrix", r, c)
		}
		if labels != nil && (len(labels) != r || unlabeled) {
			t.Fatalf("%d labels for %d rows (unlabeled %v)", len(labels), r, unlabeled)
		}
		for _, v := range x.RawMatrix().Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite feature %v", v)
			}
		}
		if len(text) < r {
			t.Fatalf("%d rows from %d bytes", r, len(text))
		}
	})
}
