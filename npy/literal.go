package npy

import (
	"fmt"
	"strings"

	"github.com/dadil/dadil/internal/clip"
)

// This file implements a parser for the small subset of Python literal
// syntax that appears in .npy headers: a dict whose keys are strings and
// whose values are strings, integers, True/False/None, tuples, lists and
// nested dicts. It never evaluates anything and bounds its recursion depth.

// maxLiteralDepth bounds the nesting of tuples, lists and dicts in a header.
// Real headers nest at most a few levels (structured dtypes), so this only
// guards against pathological input.
const maxLiteralDepth = 64

// valueKind is the kind of a parsed Python literal.
type valueKind int

const (
	kindString valueKind = iota
	kindInt
	kindBool
	kindNone
	kindTuple
	kindList
	kindDict
)

// pyValue is a parsed Python literal.
type pyValue struct {
	kind  valueKind
	str   string    // kindString: the decoded string; kindInt: the digits, with sign
	bool  bool      // kindBool
	items []pyValue // kindTuple, kindList
	keys  []pyValue // kindDict, parallel to items
	src   string    // the source text of the value, for error messages
}

// quoted returns the source text of v for an error message (clip.Name).
func (v *pyValue) quoted() string { return clip.Name(v.src) }

// literalParser is a recursive-descent parser over a header string.
type literalParser struct {
	s     string
	pos   int
	depth int
}

// parseHeaderDict parses s as a Python dict literal optionally followed by
// whitespace.
func parseHeaderDict(s string) (pyValue, error) {
	p := &literalParser{s: s}
	p.skipSpace()
	if p.pos >= len(p.s) {
		return pyValue{}, fmt.Errorf("header is empty")
	}
	if p.s[p.pos] != '{' {
		return pyValue{}, fmt.Errorf("header is not a dict literal: it starts with %s", clip.Quote(p.s[p.pos:]))
	}
	v, err := p.value()
	if err != nil {
		return pyValue{}, err
	}
	p.skipSpace()
	if p.pos != len(p.s) {
		return pyValue{}, fmt.Errorf("header has unexpected text after the dict at offset %d: %s", p.pos, clip.Quote(p.s[p.pos:]))
	}
	return v, nil
}

func isSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f', '\v':
		return true
	}
	return false
}

func (p *literalParser) skipSpace() {
	for p.pos < len(p.s) && isSpace(p.s[p.pos]) {
		p.pos++
	}
}

// errorf returns a syntax error that reports the current offset.
func (p *literalParser) errorf(format string, args ...any) error {
	return fmt.Errorf("header is not a valid dict literal: %s at offset %d", fmt.Sprintf(format, args...), p.pos)
}

// describeNext describes the text at the current position for error
// messages.
func (p *literalParser) describeNext() string {
	if p.pos >= len(p.s) {
		return "end of header"
	}
	return clip.Quote(p.s[p.pos:])
}

// value parses one literal starting at p.pos, after skipping white space.
func (p *literalParser) value() (pyValue, error) {
	p.skipSpace()
	if p.pos >= len(p.s) {
		return pyValue{}, p.errorf("unexpected end of header")
	}
	start := p.pos
	var (
		v   pyValue
		err error
	)
	switch c := p.s[p.pos]; {
	case c == '\'' || c == '"':
		v, err = p.str()
	case c == '{':
		v, err = p.container('{', '}', kindDict)
	case c == '(':
		v, err = p.container('(', ')', kindTuple)
	case c == '[':
		v, err = p.container('[', ']', kindList)
	case c == '-' || c == '+' || ('0' <= c && c <= '9'):
		v, err = p.integer()
	case isIdentStart(c):
		v, err = p.name()
	default:
		return pyValue{}, p.errorf("unexpected %s", p.describeNext())
	}
	if err != nil {
		return pyValue{}, err
	}
	v.src = p.s[start:p.pos]
	return v, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isIdentChar(c byte) bool {
	return isIdentStart(c) || ('0' <= c && c <= '9')
}

// name parses True, False or None.
func (p *literalParser) name() (pyValue, error) {
	start := p.pos
	for p.pos < len(p.s) && isIdentChar(p.s[p.pos]) {
		p.pos++
	}
	switch w := p.s[start:p.pos]; w {
	case "True":
		return pyValue{kind: kindBool, bool: true}, nil
	case "False":
		return pyValue{kind: kindBool, bool: false}, nil
	case "None":
		return pyValue{kind: kindNone}, nil
	default:
		p.pos = start
		return pyValue{}, p.errorf("unexpected name %s (only True, False and None are allowed)", clip.Quote(w))
	}
}

// integer parses a decimal integer with an optional sign. A trailing 'L'
// or 'l' (written by Python 2 for long integers) is accepted and ignored.
// Floats are rejected.
func (p *literalParser) integer() (pyValue, error) {
	start := p.pos
	var b strings.Builder
	if c := p.s[p.pos]; c == '-' || c == '+' {
		if c == '-' {
			b.WriteByte('-')
		}
		p.pos++
		p.skipSpace()
	}
	digits := p.pos
	for p.pos < len(p.s) && '0' <= p.s[p.pos] && p.s[p.pos] <= '9' {
		p.pos++
	}
	if p.pos == digits {
		p.pos = start
		return pyValue{}, p.errorf("malformed number")
	}
	b.WriteString(p.s[digits:p.pos])
	if p.pos < len(p.s) {
		switch c := p.s[p.pos]; {
		case c == 'L' || c == 'l':
			p.pos++
		case c == '.' || c == 'e' || c == 'E' || c == 'j' || c == 'J' || c == 'x' || c == 'X' || c == '_' || isIdentChar(c):
			p.pos = start
			return pyValue{}, p.errorf("unsupported number %s (only decimal integers are allowed)", clip.Quote(p.s[start:]))
		}
	}
	return pyValue{kind: kindInt, str: b.String()}, nil
}

// str parses a single- or double-quoted string with the escapes \\, \',
// \", \n, \t, \r and \0. Other escapes and prefixes are rejected; they do
// not occur in headers written by numpy.
func (p *literalParser) str() (pyValue, error) {
	quote := p.s[p.pos]
	p.pos++
	var b strings.Builder
	for {
		if p.pos >= len(p.s) {
			return pyValue{}, p.errorf("unterminated string")
		}
		c := p.s[p.pos]
		switch {
		case c == quote:
			p.pos++
			return pyValue{kind: kindString, str: b.String()}, nil
		case c == '\n':
			return pyValue{}, p.errorf("newline in string")
		case c == '\\':
			if p.pos+1 >= len(p.s) {
				p.pos++
				return pyValue{}, p.errorf("unterminated string")
			}
			e := p.s[p.pos+1]
			switch e {
			case '\\', '\'', '"':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			default:
				return pyValue{}, p.errorf("unsupported escape sequence %s in string", clip.Quote(p.s[p.pos:p.pos+2]))
			}
			p.pos += 2
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
}

// container parses a dict, tuple or list. A parenthesised single value
// without a trailing comma, such as (3), is returned as that value, as in
// Python.
func (p *literalParser) container(open, close byte, kind valueKind) (pyValue, error) {
	if p.depth >= maxLiteralDepth {
		return pyValue{}, p.errorf("nesting deeper than %d levels", maxLiteralDepth)
	}
	p.depth++
	defer func() { p.depth-- }()

	p.pos++ // open
	v := pyValue{kind: kind}
	sawComma := false
	for {
		p.skipSpace()
		if p.pos >= len(p.s) {
			return pyValue{}, p.errorf("missing %q", close)
		}
		if p.s[p.pos] == close {
			p.pos++
			break
		}
		if len(v.items) > 0 && !sawComma {
			return pyValue{}, p.errorf("expected ',' or %q, found %s", close, p.describeNext())
		}
		if kind == kindDict {
			k, err := p.value()
			if err != nil {
				return pyValue{}, err
			}
			p.skipSpace()
			if p.pos >= len(p.s) || p.s[p.pos] != ':' {
				return pyValue{}, p.errorf("expected ':' after dict key %s, found %s", k.quoted(), p.describeNext())
			}
			p.pos++
			v.keys = append(v.keys, k)
		}
		item, err := p.value()
		if err != nil {
			return pyValue{}, err
		}
		v.items = append(v.items, item)
		p.skipSpace()
		sawComma = false
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			sawComma = true
			p.pos++
		}
	}
	if kind == kindTuple && len(v.items) == 1 && !sawComma {
		// (x) is just x in parentheses.
		return v.items[0], nil
	}
	return v, nil
}
