package classify

import (
	"errors"
	"fmt"
	"slices"
)

// BalancedAccuracy returns the mean over the classes present in truth of
// the fraction of their rows predicted right (the recall of every class):
// each class weighs the same whatever its size, so a classifier that
// predicts the majority class of an imbalanced set scores 1/(number of
// classes), not the majority's share. Rows whose truth is negative (a class
// unknown to the classifier) form one more class, which is never predicted
// right. The slices must have the same, non-zero, length.
func BalancedAccuracy(pred, truth []int) (float64, error) {
	if len(pred) != len(truth) {
		return 0, fmt.Errorf("classify: %d predictions but %d true labels", len(pred), len(truth))
	}
	if len(pred) == 0 {
		return 0, errors.New("classify: no predictions")
	}
	rows := map[int]int{}
	hits := map[int]int{}
	for i, t := range truth {
		if t < 0 {
			t = -1
		}
		rows[t]++
		if pred[i] == t && t >= 0 {
			hits[t]++
		}
	}
	classes := make([]int, 0, len(rows))
	for c := range rows {
		classes = append(classes, c)
	}
	slices.Sort(classes) // a fixed order of summation
	var sum float64
	for _, c := range classes {
		sum += float64(hits[c]) / float64(rows[c])
	}
	return sum / float64(len(classes)), nil
}
