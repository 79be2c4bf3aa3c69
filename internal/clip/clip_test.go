package clip

import (
	"encoding/csv"
	"errors"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	long := strings.Repeat("x", 16<<20)
	for _, tc := range []struct{ in, want string }{
		{"abc", `"abc"`},
		{"", `""`},
		{strings.Repeat("a", Max), `"` + strings.Repeat("a", Max) + `"`},
		{strings.Repeat("a", Max+1), `"` + strings.Repeat("a", Max) + `"… (41 bytes)`},
		{long, `"` + strings.Repeat("x", Max) + `"… (16777216 bytes)`},
		// A cut never splits a character: é is 2 bytes.
		{strings.Repeat("a", Max-1) + "éé", `"` + strings.Repeat("a", Max-1) + `"… (43 bytes)`},
		{"a\nb\x00", `"a\nb\x00"`},
	} {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%.50q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := Bytes([]byte(long)); got != Quote(long) {
		t.Errorf("Bytes = %s, want %s", got, Quote(long))
	}
	if got := Path(strings.Repeat("/d", 1000)); len(got) > MaxPath+40 {
		t.Errorf("Path kept %d bytes", len(got))
	}
	if got := Path("data/a b.mat"); got != "data/a b.mat" {
		t.Errorf("Path = %s", got)
	}
	if got := Path("a\nb"); got != `"a\nb"` {
		t.Errorf("Path = %s", got)
	}
}

func TestList(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		max  int
		want string
	}{
		{nil, 3, ""},
		{[]string{"a", "b"}, 3, `a, b`},
		{[]string{"a", "b c", "c", "d"}, 2, `a, b c, … (4 in all)`},
		{[]string{"a\nb"}, 2, `"a\nb"`},
		{[]string{strings.Repeat("y", 100)}, 2, `"` + strings.Repeat("y", Max) + `"… (100 bytes)`},
	} {
		if got := List(tc.in, tc.max); got != tc.want {
			t.Errorf("List(%q, %d) = %s, want %s", tc.in, tc.max, got, tc.want)
		}
	}
}

func TestArg(t *testing.T) {
	for in, want := range map[string]string{
		"2000": "2000", "8GiB": "8GiB", "data/a.csv": "data/a.csv", "": `""`,
		"two words": `"two words"`, "é": `"é"`, strings.Repeat("9", 100): `"` + strings.Repeat("9", Max) + `"… (100 bytes)`,
	} {
		if got := Arg(in); got != want {
			t.Errorf("Arg(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestName(t *testing.T) {
	for in, want := range map[string]string{
		"x1": "x1", "my column": "my column", "é": "é", "": "",
		"a\tb": `"a\tb"`, "\xff": `"\xff"`, strings.Repeat("n", 41): `"` + strings.Repeat("n", Max) + `"… (41 bytes)`,
	} {
		if got := Name(in); got != want {
			t.Errorf("Name(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestCSVError(t *testing.T) {
	read := func(text string) error {
		r := csv.NewReader(strings.NewReader(text))
		for {
			if _, err := r.Read(); err != nil {
				return err
			}
		}
	}
	for _, tc := range []struct{ text, want string }{
		{"a,b\n1,2\"3\n", `line 2, column 4: malformed CSV: bare " in non-quoted-field`},
		{"a,b\n" + strings.Repeat("1,2\n", 3) + "1,\"2\n" + strings.Repeat("1,2\n", 115) + "3,4\"x\n",
			`line 5: malformed CSV: the record starting on this line runs on to line 121, column 4: extraneous or missing " in quoted-field (a quote that opens a field is never closed?)`},
	} {
		err := CSVError(read(tc.text))
		if err == nil || err.Error() != tc.want || !errors.Is(err, csv.ErrQuote) && !errors.Is(err, csv.ErrBareQuote) {
			t.Errorf("got %v, want %s", err, tc.want)
		}
	}
	if other := errors.New("x"); CSVError(other) != other {
		t.Error("another error was reworded")
	}
}

func TestInts(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{nil, "[]"}, {[]int{20}, "[20]"}, {[]int{1, 2, 3}, "[1 2 3]"}, {[]int{1, 2, 3, 4}, "[1 2 3 … (4 in all)]"},
	} {
		if got := Ints(tc.in, 3); got != tc.want {
			t.Errorf("Ints(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
