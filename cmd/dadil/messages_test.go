package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMessagesCutUserContent: a flag value, a command, an argument or a
// cell of any size is quoted cut to 40 bytes and its length, and a
// malformed CSV record is reported at the line where it starts.
func TestMessagesCutUserContent(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	huge := strings.Repeat("v", 16<<20)
	cut := `"` + strings.Repeat("v", 40) + `"… (16777216 bytes)`
	// A stray quote on line 5 opens a field that the next quote, on line
	// 121, closes before a stray character.
	b, err := os.ReadFile(src[0])
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	lines[4] = strings.Replace(lines[4], ",", ",\"", 1)
	lines[120] = strings.Replace(lines[120], ",", ",9\"x", 1)
	quote := filepath.Join(dir, "quote.csv")
	if err := os.WriteFile(quote, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	fit := func(extra ...string) []string {
		a := []string{"fit", "--quiet", "--source", src[1], "--target", tgt, "--out", filepath.Join(dir, "out")}
		return append(a, extra...)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"scale", fit("--scale", huge), "unknown scaling " + cut},
		{"missing", fit("--missing", huge), "unknown missing-value policy " + cut},
		{"init", fit("--init", huge), "unknown initialisation " + cut},
		{"transport", fit("--transport", huge), "unknown transport " + cut},
		{"classifier", fit("--classifier", huge), "unknown classifier " + cut},
		{"methods", adaptArgs(src, tgt, "--methods", huge), "unknown method " + cut},
		{"command", []string{huge}, "dadil: unknown command " + cut},
		{"subcommand", []string{"bench", huge}, "dadil bench: unknown command " + cut},
		{"argument", fit(huge), "unexpected argument " + cut},
		{"stray quote", fit("--source", quote), "quote.csv: line 5: malformed CSV: the record starting on this line runs on to line 121"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(tc.args...)
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %.400q, want %q", code, stderr, tc.want)
			}
			// The message (its first line) is short; an unknown command is
			// followed by the list of commands, whose length is not the
			// user's.
			if msg, _, _ := strings.Cut(stderr, "\n"); len(msg) > 600 {
				t.Fatalf("%d bytes of message on stderr", len(msg))
			}
		})
	}
}
