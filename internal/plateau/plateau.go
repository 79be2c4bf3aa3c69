// Package plateau holds the stopping rule that DaDiL's learning loops
// share (dictionary and gmm): a loss has reached a plateau when the mean
// of its last w values is at most tol (relative) below the mean of the w
// before.
package plateau

// Reached reports whether the mean of the last w losses is at most tol
// (relative) below the mean of the w before. tol < 0 disables the rule;
// fewer than 2w losses never reach it.
func Reached(loss []float64, w int, tol float64) bool {
	if tol < 0 || len(loss) < 2*w {
		return false
	}
	e := len(loss)
	var cur, prev float64
	for i := e - w; i < e; i++ {
		cur += loss[i]
	}
	for i := e - 2*w; i < e-w; i++ {
		prev += loss[i]
	}
	return prev-cur <= tol*prev
}
