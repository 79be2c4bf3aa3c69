// Package par runs independent jobs on a bounded number of goroutines: the
// worker pool behind the benchmarks and the analyses, whose jobs write
// their results by index so that the outcome does not depend on how many
// run at once.
package par

import (
	"runtime"
	"sync"
)

// ForEach calls fn(0), …, fn(n−1), at most workers at a time (GOMAXPROCS
// when workers ≤ 0), and returns when all have returned. done, if not nil,
// is called after each fn(i) returns, never by two goroutines at once, in
// the order the jobs finish.
func ForEach(n, workers int, fn func(i int), done func(i int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, workers)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
			if done != nil {
				mu.Lock()
				done(i)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// Run calls fn(0), …, fn(n−1) as ForEach does and returns the error of the
// lowest index that failed, or nil: the same error whatever the number of
// workers and the order the jobs finish in. Every job runs, even after one
// has failed.
func Run(n, workers int, fn func(i int) error, done func(i int)) error {
	errs := make([]error, n)
	ForEach(n, workers, func(i int) { errs[i] = fn(i) }, done)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
