package npy

import (
	"strings"
	"testing"
)

// render prints a parsed literal in a canonical form for comparison.
func render(v pyValue) string {
	var b strings.Builder
	var walk func(v pyValue)
	list := func(open, close string, items []pyValue, keys []pyValue) {
		b.WriteString(open)
		for i, it := range items {
			if i > 0 {
				b.WriteString(" ")
			}
			if keys != nil {
				walk(keys[i])
				b.WriteString(":")
			}
			walk(it)
		}
		b.WriteString(close)
	}
	walk = func(v pyValue) {
		switch v.kind {
		case kindString:
			b.WriteString("s" + `"` + v.str + `"`)
		case kindInt:
			b.WriteString("i" + v.str)
		case kindBool:
			if v.bool {
				b.WriteString("T")
			} else {
				b.WriteString("F")
			}
		case kindNone:
			b.WriteString("N")
		case kindTuple:
			list("(", ")", v.items, nil)
		case kindList:
			list("[", "]", v.items, nil)
		case kindDict:
			list("{", "}", v.items, v.keys)
		}
	}
	walk(v)
	return b.String()
}

func TestParseHeaderDict(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"{}", "{}"},
		{" {  } \n", "{}"},
		{"{'a': 1}", `{s"a":i1}`},
		{"{'a': 1,}", `{s"a":i1}`},
		{`{"a": 'b', 'c': "d"}`, `{s"a":s"b" s"c":s"d"}`},
		{`{'e': 'q\'\"\\\n\t\r\0z'}`, "{s\"e\":s\"q'\"\\\n\t\r\x00z\"}"},
		{"{'t': (), 'u': (1,), 'v': (1, 2), 'w': (1, 2,), 'x': (1)}", `{s"t":() s"u":(i1) s"v":(i1 i2) s"w":(i1 i2) s"x":i1}`},
		{"{'l': [], 'm': [('a', '<f8', (2,))], 'n': {'k': None}}", `{s"l":[] s"m":[(s"a" s"<f8" (i2))] s"n":{s"k":N}}`},
		{"{'b': True, 'c': False, 'd': -0, 'e': +5, 'f': - 3, 'g': 12L}", `{s"b":T s"c":F s"d":i-0 s"e":i5 s"f":i-3 s"g":i12}`},
		{"{\n\t'a'\t:\t1\r\n}\x0b\x0c", `{s"a":i1}`},
	}
	for _, tt := range tests {
		v, err := parseHeaderDict(tt.in)
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if got := render(v); got != tt.want {
			t.Errorf("%q: got %s, want %s", tt.in, got, tt.want)
		}
	}

	for _, in := range []string{"{'a': 1", "{'a: 1}", "{'a': \\}", "{'a': 1 2}", "{1 2}", "{'a'}", "{'a': tru}", "{'a': 1.5}", "{'a': 1e3}", "{'a': 1j}", "{'a': 1_0}", "{'a': 3x}", "{'a': (1 2)}", "{'a': [1,,]}", "{'a': 'b\\", "{'a': 'b\\q'}", "{'a': '\n'}", "{:1}", "{'a':}", "{'a': -}", "{,}"} {
		if _, err := parseHeaderDict(in); err == nil || !strings.HasPrefix(err.Error(), "header is not a valid dict literal: ") {
			t.Errorf("%q: err = %v", in, err)
		}
	}
}

func TestFormatShape(t *testing.T) {
	tests := []struct {
		shape       []int
		full, short string
	}{
		{nil, "()", "()"},
		{[]int{3}, "(3,)", "(3,)"},
		{[]int{2, 5}, "(2, 5)", "(2, 5)"},
		{[]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, "(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)", "(1, 2, 3, 4, ... 10 dimensions)"},
	}
	for _, tt := range tests {
		if got := formatShape(tt.shape); got != tt.full {
			t.Errorf("formatShape(%v) = %q, want %q", tt.shape, got, tt.full)
		}
		if got := formatShapeShort(tt.shape); got != tt.short {
			t.Errorf("formatShapeShort(%v) = %q, want %q", tt.shape, got, tt.short)
		}
	}
}
