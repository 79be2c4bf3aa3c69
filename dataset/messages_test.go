package dataset

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/mattest"
	"github.com/dadil/dadil/npy"
)

// TestMessagesCutUserContent: errors that quote a cell, a column name, a
// label, an option or an array or variable name quote at most clip.Max
// bytes of it with its length, however large it is (here up to 16 MiB),
// and a malformed CSV record is reported at the line where it starts.
func TestMessagesCutUserContent(t *testing.T) {
	dir := t.TempDir()
	const mib16 = 16 << 20
	big := strings.Repeat("x", mib16)
	number := "1" + strings.Repeat("0", mib16) // beyond float64's range
	cut := func(s string, n int) string { return fmt.Sprintf("%q… (%d bytes)", s[:40], n) }
	csvFile := func(name, text string) string { return writeFile(t, dir, name, []byte(text)) }
	rows := func(n int) string { return strings.Repeat("1,2\n", n) }
	longName := strings.Repeat("n", 60000) // a zip member name holds at most 65535 bytes
	npzPath := filepath.Join(dir, "long.npz")
	if err := npy.WriteNPZ(npzPath, map[string]*npy.Array{longName: {Shape: []int{1, 1}, Data: []float64{1}}}); err != nil {
		t.Fatal(err)
	}
	matPath := filepath.Join(dir, "long.mat")
	matName := longName[:4000] // a MAT-file name this package reads holds at most 4096 bytes
	mattest.WriteFile(t, matPath, mattest.Column(matName, []float64{1, 2}))
	for _, tc := range []struct {
		name, path string
		opt        *ReadOptions
		want       string
	}{
		{"number beyond float64", csvFile("range.csv", "a,b\n1,"+number+"\n"), nil, `line 2, column "b": ` + cut(number, mib16+1) + " is outside the float64 range"},
		{"text cell", csvFile("text.csv", "a,b\n1,"+big+"\n"), nil, `line 2, column "b": ` + cut(big, mib16) + " is not a number"},
		{"label", csvFile("label.csv", "a,label\n1,"+number+"\n"), nil, `line 2, column "label": label ` + cut(number, mib16+1) + " is not an integer"},
		{"column name", csvFile("dup.csv", big+","+big+"\n1,2\n"), nil, "line 1: columns 1 and 2 are both named " + cut(big, mib16)},
		{"column of a bad cell", csvFile("col.csv", "a,"+big+"\n1,z\n"), nil, "line 2, column " + cut(big, mib16) + `: "z" is not a number`},
		{"label column option", csvFile("opt.csv", "a,b\n1,2\n"), &ReadOptions{LabelColumn: big}, "no label column " + cut(big, mib16) + " (columns: a, b)"},
		{"stray quote on line 5", csvFile("quote.csv", "a,b\n"+rows(3)+"1,\"2\n"+rows(115)+"3,4\"x\n"+rows(2)), nil,
			`line 5: malformed CSV: the record starting on this line runs on to line 121, column 4: extraneous or missing " in quoted-field`},
		{"npz array option", npzPath, &ReadOptions{FeaturesVar: []string{big}}, `no features array (tried ` + cut(big, mib16) + `; arrays: ` + cut(longName, 60000) + ")"},
		{"mat variable option", matPath, &ReadOptions{FeaturesVar: []string{big}}, `no features variable (tried ` + cut(big, mib16) + `; numeric variables: ` + cut(matName, 4000) + ")"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(tc.path, tc.opt)
			errContains(t, err, tc.want)
			if n := len(err.Error()); n > 600 {
				t.Fatalf("a message of %d bytes", n)
			}
		})
	}
}
