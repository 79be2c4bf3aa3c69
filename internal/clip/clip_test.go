package clip

import (
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
}

func TestList(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		max  int
		want string
	}{
		{nil, 3, ""},
		{[]string{"a", "b"}, 3, `"a", "b"`},
		{[]string{"a", "b", "c", "d"}, 2, `"a", "b", … (4 in all)`},
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
