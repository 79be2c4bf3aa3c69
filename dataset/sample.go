package dataset

import "math/rand/v2"

// BalancedBatch returns the row indices of a class-balanced mini-batch of
// size rows, appended to dst[:0]. classIdx[i] is the class index of row i,
// in [0, nClasses); rows with other values are never drawn.
//
// The batch is shared equally among the classes that have rows: each gets
// size/m rows, where m is the number of such classes, and the remainder
// size%m goes one row each to the first classes in increasing class
// order. Classes without rows get nothing, so the batch always has size
// rows if any row is valid, and none otherwise. Within a class, rows are
// drawn without replacement when the class has at least its share of
// rows. A class with fewer rows than its share contributes every one of
// its rows once, and the rest of its share is drawn uniformly with
// replacement from its rows.
//
// Indices are grouped by class, in increasing class order, and in random
// order within a class. The result is a deterministic function of the
// arguments and the state of rng, which must not be nil. The cost is
// O(len(classIdx) + size) time and memory per call.
func BalancedBatch(rng *rand.Rand, classIdx []int, nClasses, size int, dst []int) []int {
	dst = dst[:0]
	if size <= 0 || nClasses <= 0 {
		return dst
	}
	rows, start := classGroups(classIdx, nClasses)
	present := 0
	for k := range len(start) - 1 {
		if start[k+1] > start[k] {
			present++
		}
	}
	if present == 0 {
		return dst
	}
	share, extra := size/present, size%present
	for k := range len(start) - 1 {
		group := rows[start[k]:start[k+1]]
		if len(group) == 0 {
			continue
		}
		q := share
		if extra > 0 {
			q++
			extra--
		}
		dst = appendSample(rng, dst, group, q)
	}
	return dst
}

// classGroups groups the indices of the rows whose class index lies in
// [0, nClasses) by class, a stable counting sort: class k's rows are
// rows[start[k]:start[k+1]], for k up to the largest class present (none:
// start has a single 0). The counts are sized by the classes present, not
// by nClasses, which may be large.
func classGroups(classIdx []int, nClasses int) (rows, start []int) {
	top := -1
	for _, k := range classIdx {
		if k >= 0 && k < nClasses {
			top = max(top, k)
		}
	}
	start = make([]int, top+2)
	for _, k := range classIdx {
		if k >= 0 && k <= top {
			start[k+1]++
		}
	}
	for k := range top + 1 {
		start[k+1] += start[k]
	}
	rows = make([]int, start[top+1])
	next := append([]int(nil), start[:top+1]...)
	for i, k := range classIdx {
		if k >= 0 && k <= top {
			rows[next[k]] = i
			next[k]++
		}
	}
	return rows, start
}

// appendSample appends q elements of group drawn at random to dst:
// without replacement if q <= len(group), else every element once, in
// random order, followed by q-len(group) elements drawn with replacement.
// It permutes group.
func appendSample(rng *rand.Rand, dst, group []int, q int) []int {
	m := len(group)
	// A partial Fisher–Yates shuffle of the first min(q, m) places.
	for i := range min(q, m) {
		j := i + rng.IntN(m-i)
		group[i], group[j] = group[j], group[i]
		dst = append(dst, group[i])
	}
	for range q - m {
		dst = append(dst, group[rng.IntN(m)])
	}
	return dst
}

// UniformBatch returns the indices of a mini-batch of size rows drawn
// uniformly from rows 0, ..., n-1, appended to dst[:0]. If size <= n the
// rows are drawn without replacement; otherwise every row appears once, in
// random order, followed by size-n rows drawn with replacement. It returns
// an empty batch if n or size is not positive.
//
// The result is a deterministic function of the arguments and the state
// of rng, which must not be nil. UniformBatch uses O(n) time and memory
// per call; it reuses dst as work space when cap(dst) >= n.
func UniformBatch(rng *rand.Rand, n, size int, dst []int) []int {
	dst = dst[:0]
	if n <= 0 || size <= 0 {
		return dst
	}
	if size > n {
		perm := make([]int, n)
		for i := range perm {
			perm[i] = i
		}
		return appendSample(rng, dst, perm, size)
	}
	var work []int
	if cap(dst) >= n {
		work = dst[:n]
	} else {
		work = make([]int, n)
	}
	for i := range work {
		work[i] = i
	}
	for i := range size {
		j := i + rng.IntN(n-i)
		work[i], work[j] = work[j], work[i]
	}
	return work[:size]
}

// QuotaBatch returns the row indices of a mini-batch holding quotas[k] rows
// of class k, appended to dst[:0], grouped by class in increasing class
// order and in random order within a class. classIdx[i] is the class index
// of row i; rows of other values (negative, or not below len(quotas)) are
// never drawn. Within a class, rows are drawn as BalancedBatch draws them.
// A class with a positive quota but no row contributes nothing, so the
// batch then holds fewer rows than the quotas' sum. The result is a
// deterministic function of the arguments and the state of rng.
func QuotaBatch(rng *rand.Rand, classIdx []int, quotas []int, dst []int) []int {
	dst = dst[:0]
	rows, start := classGroups(classIdx, len(quotas))
	for k := range len(start) - 1 {
		if group := rows[start[k]:start[k+1]]; quotas[k] > 0 && len(group) > 0 {
			dst = appendSample(rng, dst, group, quotas[k])
		}
	}
	return dst
}
