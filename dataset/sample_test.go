package dataset

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// perClass counts the batch rows of each class.
func perClass(batch, classIdx []int, nClasses int) []int {
	c := make([]int, nClasses)
	for _, i := range batch {
		c[classIdx[i]]++
	}
	return c
}

func TestBalancedBatch(t *testing.T) {
	// Class sizes 5, 3, 0, 10 (class 2 absent); one row of an invalid
	// class.
	var classIdx []int
	for k, n := range []int{5, 3, 0, 10} {
		for range n {
			classIdx = append(classIdx, k)
		}
	}
	classIdx = append(classIdx, 7, -1)
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(classIdx), func(i, j int) { classIdx[i], classIdx[j] = classIdx[j], classIdx[i] })

	tests := []struct {
		size   int
		counts []int
	}{
		{9, []int{3, 3, 0, 3}},
		{10, []int{4, 3, 0, 3}}, // remainder to the first class
		{11, []int{4, 4, 0, 3}}, // class 1 needs a draw with replacement
		{30, []int{10, 10, 0, 10}},
		{2, []int{1, 1, 0, 0}},
		{0, []int{0, 0, 0, 0}},
		{-3, []int{0, 0, 0, 0}},
	}
	for _, tc := range tests {
		batch := BalancedBatch(rng, classIdx, 4, tc.size, nil)
		if got := perClass(batch, classIdx, 4); !slices.Equal(got, tc.counts) {
			t.Errorf("size %d: counts %v, want %v", tc.size, got, tc.counts)
		}
		// Grouped by class in increasing order.
		if !slices.IsSortedFunc(batch, func(a, b int) int { return classIdx[a] - classIdx[b] }) {
			t.Errorf("size %d: not grouped by class: %v", tc.size, batch)
		}
		// No duplicates within a class unless it is too small, and every
		// row of a small class is included.
		for k, want := range tc.counts {
			var rows []int
			for _, i := range batch {
				if classIdx[i] == k {
					rows = append(rows, i)
				}
			}
			slices.Sort(rows)
			distinct := len(slices.Compact(slices.Clone(rows)))
			avail := []int{5, 3, 0, 10}[k]
			if distinct != min(want, avail) {
				t.Errorf("size %d, class %d: %d distinct rows of %d drawn, %d available", tc.size, k, distinct, want, avail)
			}
		}
	}
}

func TestBalancedBatchDeterministic(t *testing.T) {
	classIdx := make([]int, 1000)
	for i := range classIdx {
		classIdx[i] = (i * 7) % 10
	}
	a := BalancedBatch(rand.New(rand.NewPCG(3, 4)), classIdx, 10, 64, nil)
	b := BalancedBatch(rand.New(rand.NewPCG(3, 4)), classIdx, 10, 64, make([]int, 5, 100))
	c := BalancedBatch(rand.New(rand.NewPCG(5, 6)), classIdx, 10, 64, nil)
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different batches")
	}
	if slices.Equal(a, c) {
		t.Fatal("different seeds, same batch")
	}
	if got := perClass(a, classIdx, 10); !slices.Equal(got, []int{7, 7, 7, 7, 6, 6, 6, 6, 6, 6}) {
		t.Fatalf("counts %v", got)
	}
	// Reusing dst.
	dst := make([]int, 0, 64)
	out := BalancedBatch(rand.New(rand.NewPCG(3, 4)), classIdx, 10, 64, dst)
	if &out[0] != &dst[:1][0] || !slices.Equal(out, a) {
		t.Fatal("dst not reused")
	}
}

func TestBalancedBatchEdgeCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	if b := BalancedBatch(rng, nil, 3, 10, nil); len(b) != 0 {
		t.Fatalf("no rows: %v", b)
	}
	if b := BalancedBatch(rng, []int{5, 6, -1}, 3, 10, nil); len(b) != 0 {
		t.Fatalf("no valid rows: %v", b)
	}
	if b := BalancedBatch(rng, []int{0, 0}, 0, 10, nil); len(b) != 0 {
		t.Fatalf("no classes: %v", b)
	}
	// A huge class count does not allocate by it.
	b := BalancedBatch(rng, []int{0, 1, 1}, 1<<60, 4, nil)
	if got := perClass(b, []int{0, 1, 1}, 2); !slices.Equal(got, []int{2, 2}) {
		t.Fatalf("counts %v", got)
	}
	// Statistical check: rows of a class are drawn uniformly.
	classIdx := []int{0, 0, 0, 0, 1}
	hits := make([]int, 5)
	for range 20000 {
		for _, i := range BalancedBatch(rng, classIdx, 2, 2, nil) {
			hits[i]++
		}
	}
	for i := range 4 {
		if hits[i] < 4600 || hits[i] > 5400 {
			t.Errorf("row %d drawn %d times of 20000, want about 5000", i, hits[i])
		}
	}
}

func TestUniformBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	tests := []struct {
		n, size, want int
	}{
		{10, 4, 4}, {10, 10, 10}, {10, 13, 13}, {1, 3, 3}, {0, 5, 0}, {5, 0, 0}, {-1, 2, 0},
	}
	for _, tc := range tests {
		b := UniformBatch(rng, tc.n, tc.size, nil)
		if len(b) != tc.want {
			t.Fatalf("n %d size %d: %d indices", tc.n, tc.size, len(b))
		}
		seen := map[int]int{}
		for _, i := range b {
			if i < 0 || i >= tc.n {
				t.Fatalf("index %d out of range", i)
			}
			seen[i]++
		}
		if len(seen) != max(0, min(tc.n, tc.size)) {
			t.Fatalf("n %d size %d: %d distinct indices", tc.n, tc.size, len(seen))
		}
	}
	a := UniformBatch(rand.New(rand.NewPCG(1, 2)), 100, 10, nil)
	dst := make([]int, 0, 100)
	b := UniformBatch(rand.New(rand.NewPCG(1, 2)), 100, 10, dst)
	if !slices.Equal(a, b) || &b[0] != &dst[:1][0] {
		t.Fatal("not deterministic, or dst not reused")
	}
	// Uniformity.
	hits := make([]int, 10)
	for range 10000 {
		for _, i := range UniformBatch(rng, 10, 3, nil) {
			hits[i]++
		}
	}
	for i, h := range hits {
		if h < 2700 || h > 3300 {
			t.Errorf("row %d drawn %d times, want about 3000", i, h)
		}
	}
}

// TestQuotaBatch: every class gets its quota, rows of other values are
// never drawn, a class without rows gives nothing, and the same state
// gives the same batch.
func TestQuotaBatch(t *testing.T) {
	classIdx := []int{0, 1, 1, 2, 2, 2, -1, 5, 0, 1}
	quotas := []int{3, 1, 4, 2} // class 3 has no row
	rng := rand.New(rand.NewPCG(1, 2))
	got := QuotaBatch(rng, classIdx, quotas, nil)
	count := make([]int, 4)
	for _, i := range got {
		k := classIdx[i]
		if k < 0 || k >= 4 {
			t.Fatalf("drew row %d of class %d", i, k)
		}
		count[k]++
	}
	if want := []int{3, 1, 4, 0}; !slices.Equal(count, want) {
		t.Fatalf("counts %v, want %v", count, want)
	}
	again := QuotaBatch(rand.New(rand.NewPCG(1, 2)), classIdx, quotas, nil)
	if !slices.Equal(got, again) {
		t.Fatal("the same state gave another batch")
	}
}
