package classify

import (
	"math"
	"testing"
)

func TestBalancedAccuracy(t *testing.T) {
	for _, tc := range []struct {
		name        string
		pred, truth []int
		want        float64
	}{
		{"all right", []int{0, 1, 2}, []int{0, 1, 2}, 1},
		{"majority class", []int{0, 0, 0, 0}, []int{0, 0, 0, 1}, 0.5},
		{"one class each half right", []int{0, 1, 1, 0}, []int{0, 0, 1, 1}, 0.5},
		{"imbalanced", []int{1, 0, 0, 0, 1}, []int{0, 0, 0, 0, 1}, (0.75 + 1) / 2},
		{"unknown class", []int{0, 1}, []int{0, -1}, 0.5},
		{"unknown never right", []int{-1, -3}, []int{-1, -3}, 0},
	} {
		got, err := BalancedAccuracy(tc.pred, tc.truth)
		if err != nil || math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	if _, err := BalancedAccuracy([]int{1}, []int{1, 2}); err == nil {
		t.Error("lengths differ: no error")
	}
	if _, err := BalancedAccuracy(nil, nil); err == nil {
		t.Error("no predictions: no error")
	}
	// On balanced classes it is the accuracy.
	pred, truth := []int{0, 1, 1, 2, 2, 0}, []int{0, 0, 1, 1, 2, 2}
	a, _ := Accuracy(pred, truth)
	b, _ := BalancedAccuracy(pred, truth)
	if a != b {
		t.Errorf("balanced classes: accuracy %v, balanced %v", a, b)
	}
}
