// Package sysmem reports how much memory this process may use, for the
// memory guards of the library and the command line: a fit whose estimated
// peak exceeds the limit is refused before any work instead of dying out of
// memory part-way.
//
// On Linux the limit is the smallest of
//
//   - the memory the system can give: MemAvailable of /proc/meminfo (the
//     kernel's estimate of what can be allocated without swapping) plus
//     what this process already holds (VmRSS of /proc/self/status), since
//     a fit's estimate counts the data the process has already read;
//   - the memory limit of the process's control group and of every group
//     above it: memory.max (cgroup v2) or memory.limit_in_bytes (cgroup
//     v1), read under /sys/fs/cgroup;
//   - the address-space limit RLIMIT_AS (ulimit -v).
//
// Elsewhere, or when none of these can be read, it is Fallback. The limit
// bounds the whole process, not what is left: other processes of the same
// control group are not subtracted.
package sysmem

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dadil/dadil/internal/clip"
)

// Fallback is the limit where the machine's memory cannot be read: 8 GiB.
const Fallback = 8 << 30

// Limit is a memory limit and what set it.
type Limit struct {
	Bytes int64
	// Source says where the limit comes from, for messages, such as
	// "available memory (MemAvailable in /proc/meminfo)".
	Source string
}

// String formats the limit for messages: "7.5 GiB (available memory …)".
func (l Limit) String() string { return Size(l.Bytes) + " (" + l.Source + ")" }

// Machine returns the memory limit of this process (see the package
// documentation).
func Machine() Limit { return machine() }

// probe computes the limit from the files under root (a Linux file system
// tree: root/proc/meminfo, root/sys/fs/cgroup, …) and the address-space
// limit as (0: none).
func probe(root string, as uint64) Limit {
	lim := Limit{Bytes: math.MaxInt64}
	if avail, ok := meminfo(filepath.Join(root, "proc/meminfo")); ok {
		lim = Limit{Bytes: sat(avail + rss(filepath.Join(root, "proc/self/status"))), Source: "available memory: MemAvailable in /proc/meminfo plus this process's resident memory"}
	}
	if c, file, ok := cgroupLimit(root); ok && c < lim.Bytes {
		lim = Limit{Bytes: c, Source: "memory limit of the control group: " + file}
	}
	if as > 0 && as < uint64(lim.Bytes) {
		lim = Limit{Bytes: int64(as), Source: "address-space limit (ulimit -v)"}
	}
	if lim.Source == "" {
		return Limit{Bytes: Fallback, Source: "the default where the machine's memory is unknown"}
	}
	return lim
}

// sat converts a byte count to int64, saturating.
func sat(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}

// meminfo returns MemAvailable (or, on kernels before 3.14, MemFree) of a
// /proc/meminfo file, in bytes.
func meminfo(file string) (uint64, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	fields := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		if n, ok := kib(v); ok {
			fields[k] = n
		}
	}
	for _, k := range []string{"MemAvailable", "MemFree"} {
		if n, ok := fields[k]; ok {
			return n, true
		}
	}
	return 0, false
}

// kib parses a value of /proc/meminfo or /proc/self/status, "  123 kB",
// into bytes.
func kib(v string) (uint64, bool) {
	f := strings.Fields(v)
	if len(f) != 2 || f[1] != "kB" {
		return 0, false
	}
	n, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil || n > math.MaxUint64/1024 {
		return 0, false
	}
	return n * 1024, true
}

// rss returns VmRSS of a /proc/self/status file, in bytes, or 0.
func rss(file string) uint64 {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := kib(v)
			return n
		}
	}
	return 0
}

// cgroupLimit returns the smallest memory limit of the process's control
// group and its ancestors, cgroup v2 first, then v1, with the file that
// sets it (relative to root).
func cgroupLimit(root string) (int64, string, bool) {
	b, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return 0, "", false
	}
	best, file, found := int64(math.MaxInt64), "", false
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var dir, name string
		switch {
		case parts[0] == "0" && parts[1] == "":
			dir, name = "sys/fs/cgroup", "memory.max"
		case hasController(parts[1], "memory"):
			dir, name = "sys/fs/cgroup/memory", "memory.limit_in_bytes"
		default:
			continue
		}
		if v, f, ok := smallestUp(root, dir, parts[2], name); ok && v < best {
			best, file, found = v, f, true
		}
	}
	return best, file, found
}

// hasController reports whether the comma-separated list holds c.
func hasController(list, c string) bool {
	for x := range strings.SplitSeq(list, ",") {
		if x == c {
			return true
		}
	}
	return false
}

// unlimited is the smallest value a cgroup v1 limit file holds when there
// is no limit (the kernel writes the largest page-aligned int64).
const unlimited = 1 << 62

// smallestUp reads the limit file name in group p of the hierarchy mounted
// at root/dir and in every ancestor of p, and returns the smallest limit.
// Inside a cgroup namespace the mounted hierarchy starts at the process's
// own group, so the mount's top is read as well.
func smallestUp(root, dir, p, name string) (int64, string, bool) {
	best, file, found := int64(math.MaxInt64), "", false
	p = path.Clean("/" + p)
	for {
		f := path.Join("/", dir, p, name)
		if v, ok := limitFile(filepath.Join(root, f)); ok && v < best {
			best, file, found = v, f, true
		}
		if p == "/" {
			return best, file, found
		}
		p = path.Dir(p)
	}
}

// limitFile parses a cgroup memory limit file: a number of bytes, or "max"
// (v2) or a huge number (v1) for none.
func limitFile(file string) (int64, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(b))
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v >= unlimited {
		return 0, false
	}
	return int64(v), true
}

// Size formats a number of bytes with a binary unit: "512 B", "3.0 KiB",
// "7.5 GiB".
func Size(b int64) string {
	const units = "KMGTPE"
	if b < 1024 {
		return fmt.Sprintf("%d B", b)
	}
	v, i := float64(b)/1024, 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, units[i])
}

// ParseSize parses a size such as "8GiB", "500MB", "1.5 G", "4096" (bytes):
// a non-negative number followed by an optional unit, B, K, M, G, T or P,
// with an optional "iB" (powers of 1024) or "B" (powers of 1000, except a
// bare letter, which is a power of 1024 as in ulimit and GOMEMLIMIT's
// spelling). Units are case-insensitive.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.TrimSpace(t[i:])
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, fmt.Errorf("want a size such as 8GiB, 500MB or 1073741824 (bytes)")
	}
	mult, ok := unitOf(strings.ToLower(unit))
	if !ok {
		return 0, fmt.Errorf("unknown unit %s (want B, KiB, MiB, GiB, TiB, KB, MB, GB, TB, or K, M, G, T)", clip.Quote(unit))
	}
	b := v * mult
	if math.IsInf(b, 0) || b >= math.MaxInt64 {
		return 0, fmt.Errorf("more than %d bytes", int64(math.MaxInt64))
	}
	return int64(b), nil
}

// unitOf returns the multiplier of a lower-case unit.
func unitOf(u string) (float64, bool) {
	if u == "" || u == "b" {
		return 1, true
	}
	i := strings.IndexByte("kmgtp", u[0])
	if i < 0 {
		return 0, false
	}
	switch u[1:] {
	case "", "i", "ib":
		return math.Pow(1024, float64(i+1)), true
	case "b":
		return math.Pow(1000, float64(i+1)), true
	}
	return 0, false
}
