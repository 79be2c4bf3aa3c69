package npy

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestMatrix(t *testing.T) {
	a := &Array{Shape: []int{2, 3}, Data: []float64{1, 2, 3, 4, 5, 6}, DType: "<f8"}
	m, err := a.Matrix()
	if err != nil {
		t.Fatal(err)
	}
	want := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	if !mat.Equal(m, want) {
		t.Errorf("Matrix() = %v", mat.Formatted(m))
	}

	tests := []struct {
		name string
		a    *Array
		want string
	}{
		{"nil", nil, "npy: nil Array"},
		{"scalar", &Array{Shape: []int{}, Data: []float64{1}}, "npy: want a 2-D array for a matrix, got shape () (0 dimensions)"},
		{"vector", &Array{Shape: []int{3}, Data: []float64{1, 2, 3}}, "got shape (3,) (1 dimensions)"},
		{"3-D", &Array{Shape: []int{1, 2, 3}, Data: make([]float64, 6)}, "got shape (1, 2, 3) (3 dimensions)"},
		{"empty", &Array{Shape: []int{0, 3}, Data: nil}, "npy: cannot make a matrix from an empty array of shape (0, 3)"},
		{"inconsistent", &Array{Shape: []int{2, 3}, Data: make([]float64, 5)}, "npy: array of shape (2, 3) needs 6 values, Data has 5"},
		{"negative", &Array{Shape: []int{-2, -3}, Data: make([]float64, 6)}, "negative"},
	}
	for _, tt := range tests {
		m, err := tt.a.Matrix()
		if err == nil || !strings.Contains(err.Error(), tt.want) || m != nil {
			t.Errorf("%s: Matrix() = %v, %v; want error %q", tt.name, m, err, tt.want)
		}
	}
}

func TestVector(t *testing.T) {
	a := &Array{Shape: []int{3}, Data: []float64{1, 2, 3}}
	v, err := a.Vector()
	if err != nil || !sameFloats(v, []float64{1, 2, 3}) {
		t.Errorf("Vector() = %v, %v", v, err)
	}
	v, err = (&Array{Shape: []int{0}}).Vector()
	if err != nil || len(v) != 0 {
		t.Errorf("empty Vector() = %v, %v", v, err)
	}
	tests := []struct {
		name string
		a    *Array
		want string
	}{
		{"nil", nil, "npy: nil Array"},
		{"scalar", &Array{Shape: []int{}, Data: []float64{1}}, "npy: want a 1-D array for a vector, got shape () (0 dimensions)"},
		{"column", &Array{Shape: []int{3, 1}, Data: []float64{1, 2, 3}}, "got shape (3, 1) (2 dimensions)"},
		{"inconsistent", &Array{Shape: []int{4}, Data: []float64{1}}, "needs 4 values, Data has 1"},
	}
	for _, tt := range tests {
		v, err := tt.a.Vector()
		if err == nil || !strings.Contains(err.Error(), tt.want) || v != nil {
			t.Errorf("%s: Vector() = %v, %v; want error %q", tt.name, v, err, tt.want)
		}
	}
}

func TestInts(t *testing.T) {
	a := &Array{Shape: []int{2, 3}, Data: []float64{0, -1, 2, math.Copysign(0, -1), 1e15, -9.223372036854775808e18}}
	got, err := a.Ints()
	if want := []int{0, -1, 2, 0, 1e15, math.MinInt64}; err != nil || !sameInts(got, want) {
		t.Errorf("Ints() = %v, %v; want %v", got, err, want)
	}
	got, err = (&Array{Shape: []int{}, Data: []float64{7}}).Ints()
	if err != nil || !sameInts(got, []int{7}) {
		t.Errorf("scalar Ints() = %v, %v", got, err)
	}

	tests := []struct {
		name string
		a    *Array
		want string
	}{
		{"nil", nil, "npy: nil Array"},
		{"fraction", &Array{Shape: []int{3}, Data: []float64{1, 2, 2.5}}, "npy: value at index 2 is 2.5, not an integer"},
		{"fraction 2-D", &Array{Shape: []int{2, 4}, Data: []float64{0, 0, 0, 0, 0, 0, 0, 0.1}}, "npy: value at index 7 (element [1 3]) is 0.1, not an integer"},
		{"NaN", &Array{Shape: []int{2}, Data: []float64{math.NaN(), 1.5}}, "value at index 0 is NaN, not an integer"},
		{"Inf", &Array{Shape: []int{2}, Data: []float64{1, math.Inf(1)}}, "value at index 1 is +Inf, not an integer"},
		{"too large", &Array{Shape: []int{1}, Data: []float64{9.223372036854775808e18}}, "npy: value at index 0 is 9.223372036854776e+18, outside the range of int"},
		{"too small", &Array{Shape: []int{1}, Data: []float64{-1e300}}, "outside the range of int"},
		{"inconsistent", &Array{Shape: []int{2}, Data: []float64{1}}, "needs 2 values, Data has 1"},
	}
	for _, tt := range tests {
		got, err := tt.a.Ints()
		if err == nil || !strings.Contains(err.Error(), tt.want) || got != nil {
			t.Errorf("%s: Ints() = %v, %v; want error %q", tt.name, got, err, tt.want)
		}
	}
}

func TestIntsFromFile(t *testing.T) {
	// Integer dtypes convert back to exact ints.
	raw := []uint64{uint64(1<<53 - 1), uint64(1<<64 - 1<<53 + 1), 0, 42}
	a := mustRead(t, makeNPY("<i8", false, "(2, 2)", encodeRaw("<i8", 8, raw)))
	got, err := a.Ints()
	if want := []int{1<<53 - 1, -(1<<53 - 1), 0, 42}; err != nil || !sameInts(got, want) {
		t.Errorf("Ints() = %v, %v; want %v", got, err, want)
	}
	a = mustRead(t, makeNPY("<u8", false, "(1,)", encodeRaw("<u8", 8, []uint64{math.MaxUint64})))
	if _, err := a.Ints(); err == nil || !strings.Contains(err.Error(), "beyond 2^53") {
		t.Errorf("MaxUint64: err = %v", err)
	}
	// 2⁵³ + 1 is read as 2⁵³: it and 2⁵³ would become one label.
	a = mustRead(t, makeNPY("<i8", false, "(2,)", encodeRaw("<i8", 8, []uint64{1 << 53, 1<<53 + 1})))
	if _, err := a.Ints(); err == nil || !strings.Contains(err.Error(), "value at index 0 is about 9007199254740992, beyond 2^53") {
		t.Errorf("2^53 + 1: err = %v", err)
	}
}
