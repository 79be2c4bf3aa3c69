package npy

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestZZTiming(t *testing.T) {
	dir := os.Getenv("CORPUS")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		raw, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		lines := strings.SplitN(string(raw), "\n", 3)
		s := strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")")
		q, err := strconv.Unquote(s)
		if err != nil {
			t.Fatal(err)
		}
		b := []byte(q)
		start := time.Now()
		a, err := Read(onlyReader{bytes.NewReader(b)})
		Read(bytes.NewReader(b))
		if err == nil {
			var buf bytes.Buffer
			Write(&buf, a.Shape, a.Data)
			Read(bytes.NewReader(buf.Bytes()))
		}
		if d := time.Since(start); d > 5*time.Millisecond {
			t.Logf("%s: %v len %d err %v", e.Name(), d, len(b), err)
		}
	}
}
