package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dadil/dadil/internal/golden"
)

// TestFederateJoinGolden pins what dadil federate join prints and returns,
// up to the connection to a server that does not answer, for its help and
// a table of bad and good command lines, to testdata/federate_join.golden.
func TestFederateJoinGolden(t *testing.T) {
	t.Setenv("DADIL_FEDERATE_TOKEN", "")
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	src := write("s.csv", "a,b,label\n1,2,0\n3,4,1\n5,6,0\n")
	unl := write("u.csv", "a,b\n1,2\n3,4\n")
	nan := write("n.csv", "a,b,label\n1,NaN,0\n3,4,1\n")
	none := []string{"--nats", "nats://127.0.0.1:1", "--connect-timeout", "0"}
	var b strings.Builder
	for _, args := range [][]string{
		{"--help"},
		{},
		{"--source", src, "--target", unl},
		{"--source", src, "--scale", "log"},
		{"--source", src, "--workers", "-1"},
		{"--source", src, "--classifier", "tree"},
		{"--source", src, "--out", "p.csv"},
		{"--source", src, "--name", "a.b"},
		{"--source", src, "--name", strings.Repeat("x", 65)},
		{"--source", src, "--token", "t", "--nkey", "k"},
		{"--source", src, "--tls-key", "k"},
		{"--source", src, "--connect-timeout", "-1s"},
		{"--source", src, "--bogus"},
		{"--source", src, "extra"},
		append([]string{"--source", filepath.Join(dir, "missing.csv")}, none...),
		append([]string{"--source", nan}, none...),
		append([]string{"--source", unl}, none...),
		append([]string{"--source", src, "--scale", "standard", "--name", "site-1"}, none...),
		append([]string{"--target", unl, "--out", filepath.Join(dir, "p.csv"), "--classifier", "knn", "--scale", "minmax"}, none...),
		append([]string{"--target", src, "--label-column", "b", "--report", filepath.Join(dir, "r.json")}, none...),
	} {
		code, stdout, stderr := runCLI(append([]string{"federate", "join"}, args...)...)
		fmt.Fprintf(&b, "%s\nexit %d\nstdout: %s\nstderr: %s\n", strings.Join(args, " "), code, stdout, stderr)
	}
	golden.Check(t, "federate_join.golden", strings.ReplaceAll(b.String(), dir, "DIR"))
}
