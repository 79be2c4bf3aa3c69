// Package clip bounds the user content that messages quote: a cell, a
// column or variable name, a label, a flag value or a field of a file map
// can hold megabytes, and a message must not echo them whole.
//
// The rule: content is quoted Go-style (strconv.Quote, so control bytes and
// invalid UTF-8 show as escapes) after being cut to its first Max bytes,
// at a character boundary; content cut this way is followed by "…" and its
// length, "\"abc…\"… (16777216 bytes)". Paths, which are longer in normal
// use, are cut at MaxPath bytes the same way.
package clip

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Max is the number of bytes of user content a message quotes.
const Max = 40

// MaxPath is the number of bytes of a path a message quotes.
const MaxPath = 256

// Quote returns s quoted for a message, cut to Max bytes.
func Quote(s string) string { return quote(s, Max) }

// Path returns the path p quoted for a message, cut to MaxPath bytes.
func Path(p string) string { return quote(p, MaxPath) }

// Arg returns a command-line value for a message: as it is when it is at
// most Max bytes of printable ASCII without spaces or quotes ("2000",
// "8GiB", "data/a.csv"), else Quote(s).
func Arg(s string) string {
	if len(s) == 0 || len(s) > Max {
		return Quote(s)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c > '~' || c == '"' || c == '\'' || c == '\\' {
			return Quote(s)
		}
	}
	return s
}

// Bytes is Quote for content held as bytes.
func Bytes(b []byte) string {
	if len(b) > Max+utf8.UTFMax {
		return quote(string(b[:Max+utf8.UTFMax]), Max, len(b))
	}
	return quote(string(b), Max)
}

// quote quotes s cut to n bytes; total, if given, is the length of the
// content s was taken from.
func quote(s string, n int, total ...int) string {
	size := len(s)
	if len(total) > 0 {
		size = total[0]
	}
	if size <= n {
		return strconv.Quote(s)
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), size)
}

// List joins quoted names (Quote) for a message, at most max of them,
// with the count of the others: `"a", "b", … (40 in all)`.
func List(names []string, max int) string {
	q := make([]string, 0, min(len(names), max))
	for _, s := range names[:min(len(names), max)] {
		q = append(q, Quote(s))
	}
	s := strings.Join(q, ", ")
	if len(names) > max {
		s += fmt.Sprintf(", … (%d in all)", len(names))
	}
	return s
}
