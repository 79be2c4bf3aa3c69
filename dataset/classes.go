package dataset

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Classes maps label values to class indices 0, 1, ..., Len()-1.
type Classes struct {
	// Values holds the distinct label values in increasing order: class
	// index k stands for label Values[k].
	Values []int
}

// NewClasses returns the classes of the labeled domains: the sorted
// distinct values of all their labels. Unlabeled domains are skipped; it
// is an error if no domain is labeled or a domain is nil.
func NewClasses(domains ...*File) (*Classes, error) {
	var values []int
	labeled := false
	for i, d := range domains {
		if d == nil {
			return nil, fmt.Errorf("dataset: domain %d is nil", i)
		}
		if d.Labels == nil {
			continue
		}
		labeled = true
		values = append(values, d.Labels...)
	}
	if !labeled {
		return nil, errors.New("dataset: no labeled domain to take the classes from")
	}
	slices.Sort(values)
	values = slices.Compact(values)
	if len(values) == 0 {
		return nil, errors.New("dataset: the labeled domains have no labels")
	}
	return &Classes{Values: slices.Clip(values)}, nil
}

// Len returns the number of classes.
func (c *Classes) Len() int {
	return len(c.Values)
}

// Index returns the class index of label, and whether label is one of the
// classes.
func (c *Classes) Index(label int) (int, bool) {
	return slices.BinarySearch(c.Values, label)
}

// Encode returns the class index of each label. It is an error if a label
// is not one of the classes; the error names the first such label and its
// position.
func (c *Classes) Encode(labels []int) ([]int, error) {
	idx := make([]int, len(labels))
	for i, l := range labels {
		k, ok := c.Index(l)
		if !ok {
			return nil, fmt.Errorf("dataset: label %d (element %d) is not one of the classes %s", l, i, c.describe())
		}
		idx[i] = k
	}
	return idx, nil
}

// describe lists the classes for messages.
func (c *Classes) describe() string {
	const max = 20
	if len(c.Values) > max {
		return fmt.Sprintf("(%d values from %d to %d)", len(c.Values), c.Values[0], c.Values[len(c.Values)-1])
	}
	s := make([]string, len(c.Values))
	for i, v := range c.Values {
		s[i] = strconv.Itoa(v)
	}
	return "{" + strings.Join(s, ", ") + "}"
}

// OneHot returns the len(idx)×Len() matrix whose row i is the indicator
// of class idx[i]. If idx is empty or there are no classes, it returns an
// empty matrix (one for which IsEmpty reports true). OneHot panics if an
// index is outside [0, Len()), as indexing a slice does: indices come from
// Encode or Index.
func (c *Classes) OneHot(idx []int) *mat.Dense {
	k := len(c.Values)
	if len(idx) == 0 || k == 0 {
		return &mat.Dense{}
	}
	data := make([]float64, len(idx)*k)
	for i, j := range idx {
		if j < 0 || j >= k {
			panic(fmt.Sprintf("dataset: OneHot: class index %d out of range [0, %d)", j, k))
		}
		data[i*k+j] = 1
	}
	return mat.NewDense(len(idx), k, data)
}

// Decode returns the label value of class index idx, Values[idx]. It
// panics if idx is outside [0, Len()), as indexing a slice does.
func (c *Classes) Decode(idx int) int {
	return c.Values[idx]
}

// Indices returns the class index of each label, −1 for a label that is
// not one of the classes, and those unknown labels in order of first
// appearance: the truth for scoring predictions (classify.Accuracy counts
// the −1 rows as errors).
func (c *Classes) Indices(labels []int) (idx, unknown []int) {
	idx = make([]int, len(labels))
	for i, y := range labels {
		k, ok := c.Index(y)
		if !ok {
			k = -1
			if !slices.Contains(unknown, y) {
				unknown = append(unknown, y)
			}
		}
		idx[i] = k
	}
	return idx, unknown
}
