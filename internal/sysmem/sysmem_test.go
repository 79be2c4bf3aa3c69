package sysmem

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree writes the files (path relative to the root: content) under a new
// root and returns it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, s := range files {
		f := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const meminfo8G = "MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    8388608 kB\n"

// TestProbe: the limit is the smallest of the available memory (plus the
// process's own), the cgroup limits of the group and its ancestors (v2 and
// v1), and the address-space limit; Fallback when nothing is known.
func TestProbe(t *testing.T) {
	const gib = 1 << 30
	status := "Name:\tdadil\nVmRSS:\t  1048576 kB\n"
	for _, tc := range []struct {
		name   string
		files  map[string]string
		as     uint64
		want   int64
		source string
	}{
		{"nothing", nil, 0, Fallback, "unknown"},
		{"meminfo", map[string]string{"proc/meminfo": meminfo8G}, 0, 8 * gib, "MemAvailable"},
		{"meminfo and rss", map[string]string{"proc/meminfo": meminfo8G, "proc/self/status": status}, 0, 9 * gib, "MemAvailable"},
		{"old kernel", map[string]string{"proc/meminfo": "MemTotal: 100 kB\nMemFree: 50 kB\n"}, 0, 50 << 10, "MemAvailable"},
		{"cgroup v2", map[string]string{
			"proc/meminfo": meminfo8G, "proc/self/cgroup": "0::/user/app\n",
			"sys/fs/cgroup/user/app/memory.max": "max\n", "sys/fs/cgroup/user/memory.max": "2147483648\n",
		}, 0, 2 * gib, "/sys/fs/cgroup/user/memory.max"},
		{"cgroup v2 namespace", map[string]string{
			"proc/meminfo": meminfo8G, "proc/self/cgroup": "0::/\n", "sys/fs/cgroup/memory.max": "1073741824\n",
		}, 0, gib, "/sys/fs/cgroup/memory.max"},
		{"cgroup v2 unlimited", map[string]string{
			"proc/meminfo": meminfo8G, "proc/self/cgroup": "0::/a\n", "sys/fs/cgroup/a/memory.max": "max\n",
		}, 0, 8 * gib, "MemAvailable"},
		{"cgroup v1", map[string]string{
			"proc/meminfo": meminfo8G, "proc/self/cgroup": "5:cpu,cpuacct:/x\n4:memory:/docker/abc\n",
			"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "3221225472\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes":            "9223372036854771712\n",
		}, 0, 3 * gib, "/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes"},
		{"ulimit -v", map[string]string{"proc/meminfo": meminfo8G}, 3 * gib, 3 * gib, "ulimit -v"},
		{"ulimit alone", nil, gib, gib, "ulimit -v"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.files != nil {
				root = tree(t, tc.files)
			}
			got := probe(root, tc.as)
			if got.Bytes != tc.want || !strings.Contains(got.Source, tc.source) {
				t.Fatalf("got %d (%s), want %d (%s)", got.Bytes, got.Source, tc.want, tc.source)
			}
		})
	}
}

// TestMachine: this machine's limit is positive and says where it comes
// from.
func TestMachine(t *testing.T) {
	l := Machine()
	if l.Bytes <= 0 || l.Source == "" {
		t.Fatalf("Machine() = %+v", l)
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{"4096", 4096, ""},
		{"8GiB", 8 << 30, ""},
		{"8 GiB", 8 << 30, ""},
		{"8g", 8 << 30, ""},
		{"8Gi", 8 << 30, ""},
		{"500MB", 500e6, ""},
		{"1.5GiB", 3 << 29, ""},
		{"2kb", 2000, ""},
		{"10B", 10, ""},
		{"1TiB", 1 << 40, ""},
		{"", 0, "want a size"},
		{"GiB", 0, "want a size"},
		{"-1GiB", 0, "want a size"},
		{"1.2.3MB", 0, "want a size"},
		{"8 parsecs", 0, `unknown unit "parsecs"`},
		{"8XB", 0, "unknown unit"},
		{"1e30", 0, "unknown unit"},
		{"99999999999999PiB", 0, "more than"},
	} {
		got, err := ParseSize(tc.in)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseSize(%q) = %d, %v; want an error containing %q", tc.in, got, err, tc.err)
		}
	}
}

func TestSize(t *testing.T) {
	for b, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 3 << 29: "1.5 GiB", 1 << 62: "4.0 EiB"} {
		if got := Size(b); got != want {
			t.Errorf("Size(%d) = %q, want %q", b, got, want)
		}
	}
}
