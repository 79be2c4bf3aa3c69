// Package clip bounds the user content that messages quote: a cell, a
// column or variable name, a label, a flag value or a field of a file map
// can hold megabytes, and a message must not echo them whole.
//
// The rule: content is quoted Go-style (strconv.Quote, so control bytes and
// invalid UTF-8 show as escapes) after being cut to its first Max bytes,
// at a character boundary; content cut this way is followed by "…" and its
// length: "abc…"… (16777216 bytes). Names (Name, List) and paths (Path),
// which messages show unquoted, stay so when they are short and printable;
// paths, longer in normal use, are cut at MaxPath bytes. CSVError names
// the line where a malformed CSV record starts.
package clip

import (
	"encoding/csv"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Max is the number of bytes of user content a message quotes.
const Max = 40

// MaxPath is the number of bytes of a path a message quotes.
const MaxPath = 256

// Quote returns s quoted for a message, cut to Max bytes.
func Quote(s string) string { return quote(s, Max) }

// Path returns a path for a message: as it is when it is at most MaxPath
// bytes of printable characters, else quoted and cut to MaxPath bytes.
func Path(p string) string {
	if len(p) > MaxPath || !printable(p) {
		return quote(p, MaxPath)
	}
	return p
}

// printable reports whether s is valid UTF-8 of printable characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

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

// Name returns a name (a column, a variable, an array) for a message: as
// it is when it is at most Max bytes of printable characters, else
// Quote(s).
func Name(s string) string {
	if len(s) > Max || !printable(s) {
		return Quote(s)
	}
	return s
}

// List joins names (Name) for a message, at most max of them, with the
// count of the others: "a, b, … (40 in all)".
func List(names []string, max int) string {
	q := make([]string, 0, min(len(names), max))
	for _, s := range names[:min(len(names), max)] {
		q = append(q, Name(s))
	}
	s := strings.Join(q, ", ")
	if len(names) > max {
		s += fmt.Sprintf(", … (%d in all)", len(names))
	}
	return s
}

// Ints formats integers as fmt's %v does, "[1 2 3]", at most max of them,
// with the count of the others: "[1 2 … (40 in all)]".
func Ints(v []int, max int) string {
	s := fmt.Sprint(v[:min(len(v), max)])
	if len(v) > max {
		s = fmt.Sprintf("%s … (%d in all)]", s[:len(s)-1], len(v))
	}
	return s
}

// CSVError rewords an error of encoding/csv to name the line where the bad
// record starts: a stray quote opens a quoted field that runs on, over
// later lines, to where the reader gives up, and that line alone would
// point far from the mistake. Other errors are returned as they are.
func CSVError(err error) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return err
	}
	if pe.StartLine == 0 || pe.StartLine == pe.Line {
		return fmt.Errorf("line %d, column %d: malformed CSV: %w", pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("line %d: malformed CSV: the record starting on this line runs on to line %d, column %d: %w (a quote that opens a field is never closed?)", pe.StartLine, pe.Line, pe.Column, pe.Err)
}
