package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCPUModel(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, content, want string
	}{
		{"x86", "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\nflags\t: fpu\n\nprocessor\t: 1\nmodel name\t: Other\n", "Intel(R) Xeon(R) Processor"},
		{"no model name", "processor\t: 0\nBogoMIPS\t: 50.00\n", "unknown"},
		{"empty model name", "model name\t:   \nmodel name\t: Second\n", "Second"},
		{"empty file", "", "unknown"},
	}
	for _, c := range cases {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := cpuModel(path); got != c.want {
			t.Errorf("%s: cpuModel = %q, want %q", c.name, got, c.want)
		}
	}
	if got := cpuModel(filepath.Join(dir, "absent")); got != "unknown" {
		t.Errorf("absent file: %q", got)
	}
}
