package par

import (
	"sync/atomic"
	"testing"
)

func TestForEach(t *testing.T) {
	for _, workers := range []int{0, 1, 3, 100} {
		out := make([]int, 50)
		var running, peak atomic.Int64
		calls := 0
		seen := map[int]bool{}
		ForEach(len(out), workers, func(i int) {
			r := running.Add(1)
			for {
				p := peak.Load()
				if r <= p || peak.CompareAndSwap(p, r) {
					break
				}
			}
			out[i] = i * i
			running.Add(-1)
		}, func(i int) {
			calls++ // unsynchronised: the race detector checks done is serialised
			seen[i] = true
		})
		for i, v := range out {
			if v != i*i {
				t.Fatalf("workers %d: out[%d] = %d", workers, i, v)
			}
		}
		if calls != len(out) || len(seen) != len(out) {
			t.Errorf("workers %d: done called %d times for %d jobs", workers, calls, len(seen))
		}
		if workers > 0 && peak.Load() > int64(workers) {
			t.Errorf("workers %d: %d jobs ran at once", workers, peak.Load())
		}
	}
	ForEach(0, 2, func(int) { t.Error("called for n = 0") }, nil)
}
