package mlp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/internal/linalg"
)

// Defaults of Settings.
const (
	DefaultEpochs       = 20
	DefaultBatch        = 128
	DefaultLearningRate = 1e-3
)

// DefaultHidden returns the hidden layer widths of the DaDiL CWRU encoder,
// 1024, 512 and 256.
func DefaultHidden() []int { return []int{1024, 512, 256} }

// Adam's constants.
const (
	beta1   = 0.9
	beta2   = 0.999
	adamEps = 1e-8
)

// Settings configure Train. The zero value means the defaults.
type Settings struct {
	// Hidden holds the widths of the hidden layers; nil means
	// DefaultHidden(). An empty non-nil slice gives softmax regression.
	Hidden []int `json:"hidden"`
	// Epochs is the number of passes over the data; zero means
	// DefaultEpochs.
	Epochs int `json:"epochs"`
	// Batch is the mini-batch size B; zero means DefaultBatch. The last
	// batch of an epoch holds the remaining rows.
	Batch int `json:"batch"`
	// LearningRate is Adam's step size; zero means DefaultLearningRate.
	LearningRate float64 `json:"learning_rate"`
	// WeightDecay is λ, the L2 penalty (λ/2)Σ‖W_l‖²_F on the weights (not
	// the biases); zero means none.
	WeightDecay float64 `json:"weight_decay"`
	// Seed seeds the initial weights and the order of the rows.
	Seed uint64 `json:"seed"`
	// Progress, if not nil, is called after each epoch with the mean
	// training loss and the training accuracy (in [0, 1]) of that
	// epoch's mini-batches.
	Progress func(epoch, epochs int, loss, accuracy float64) `json:"-"`
}

// resolve returns s with defaults filled in, or an error naming the bad
// field.
func (s *Settings) resolve() (Settings, error) {
	var r Settings
	if s != nil {
		r = *s
	}
	if r.Hidden == nil {
		r.Hidden = DefaultHidden()
	}
	for i, h := range r.Hidden {
		if h < 1 {
			return r, fmt.Errorf("mlp: hidden layer %d has width %d", i+1, h)
		}
	}
	if r.Epochs < 0 || r.Batch < 0 {
		return r, fmt.Errorf("mlp: negative epochs (%d) or batch size (%d)", r.Epochs, r.Batch)
	}
	if r.Epochs == 0 {
		r.Epochs = DefaultEpochs
	}
	if r.Batch == 0 {
		r.Batch = DefaultBatch
	}
	if !(r.LearningRate >= 0) || math.IsInf(r.LearningRate, 0) {
		return r, fmt.Errorf("mlp: learning rate %v", r.LearningRate)
	}
	if r.LearningRate == 0 {
		r.LearningRate = DefaultLearningRate
	}
	if !(r.WeightDecay >= 0) || math.IsInf(r.WeightDecay, 0) {
		return r, fmt.Errorf("mlp: weight decay %v", r.WeightDecay)
	}
	return r, nil
}

// Train fits a network with the widths of s.Hidden to the rows of X and
// their classes y ∈ {0, …, classes−1}. It is an error if X is empty or holds
// NaN or infinite values, if y does not have one class per row or holds a
// class outside 0 … classes−1, or if classes < 2.
func Train(X *mat.Dense, y []int, classes int, s *Settings) (*Network, error) {
	set, err := s.resolve()
	if err != nil {
		return nil, err
	}
	if X == nil {
		return nil, fmt.Errorf("mlp: no data")
	}
	rows, d := X.Dims()
	if rows == 0 || d == 0 {
		return nil, fmt.Errorf("mlp: empty data (%d×%d)", rows, d)
	}
	if classes < 2 {
		return nil, fmt.Errorf("mlp: %d classes (want at least 2)", classes)
	}
	if len(y) != rows {
		return nil, fmt.Errorf("mlp: %d labels for %d rows", len(y), rows)
	}
	for i, c := range y {
		if c < 0 || c >= classes {
			return nil, fmt.Errorf("mlp: label of row %d is %d, not a class in 0 … %d", i+1, c, classes-1)
		}
	}
	if i, j, ok := linalg.FirstNonFiniteEntry(X); !ok {
		return nil, fmt.Errorf("mlp: row %d, column %d is %v (counting from 1)", i+1, j+1, X.At(i, j))
	}
	return train(X, y, nil, nil, classes, set)
}

// TrainSoft is Train on soft targets: row i of the n×c matrix T is the
// probability vector of row i of X (one-hot for hard labels), and w holds
// the sample weights (nil: uniform). Each mini-batch then minimises
// Σ_i s_i CE(t_i, p_i) / Σ_i s_i over its rows, plus the weight decay.
func TrainSoft(X, T *mat.Dense, w []float64, s *Settings) (*Network, error) {
	set, err := s.resolve()
	if err != nil {
		return nil, err
	}
	if X == nil || T == nil || X.IsEmpty() || T.IsEmpty() {
		return nil, fmt.Errorf("mlp: no data")
	}
	rows, _ := X.Dims()
	r, classes := T.Dims()
	if r != rows {
		return nil, fmt.Errorf("mlp: %d target rows for %d rows", r, rows)
	}
	if classes < 2 {
		return nil, fmt.Errorf("mlp: %d classes (want at least 2)", classes)
	}
	if w != nil && len(w) != rows {
		return nil, fmt.Errorf("mlp: %d weights for %d rows", len(w), rows)
	}
	for i, v := range w {
		if !(v >= 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("mlp: weight of row %d is %v", i+1, v)
		}
	}
	for _, M := range []*mat.Dense{X, T} {
		if i, j, ok := linalg.FirstNonFiniteEntry(M); !ok {
			return nil, fmt.Errorf("mlp: row %d, column %d is %v (counting from 1)", i+1, j+1, M.At(i, j))
		}
	}
	return train(X, nil, T, w, classes, set)
}

// train runs Adam on the hard labels y, or on the soft targets T with the
// weights w.
func train(X *mat.Dense, y []int, T *mat.Dense, w []float64, classes int, set Settings) (*Network, error) {
	rows, d := X.Dims()
	rng := rand.New(rand.NewPCG(set.Seed, 0x6d6c70))
	net := initNetwork(X, append(append([]int{d}, set.Hidden...), classes), rng)
	t := newTrainer(net, min(set.Batch, rows))
	t.soft, t.weights = T, w
	Xs := standardise(X, net.Mean, net.Scale)
	perm := make([]int, rows)
	for i := range perm {
		perm[i] = i
	}
	for epoch := 1; epoch <= set.Epochs; epoch++ {
		rng.Shuffle(rows, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		var lossSum float64
		correct := 0
		for b0 := 0; b0 < rows; b0 += set.Batch {
			idx := perm[b0:min(rows, b0+set.Batch)]
			loss, ok := t.lossGrad(Xs, y, idx, set.WeightDecay)
			lossSum += loss * float64(len(idx))
			correct += ok
			t.adam(set.LearningRate)
		}
		mean := lossSum / float64(rows)
		if math.IsNaN(mean) || math.IsInf(mean, 0) {
			return nil, fmt.Errorf("mlp: training diverged at epoch %d (loss %v): lower the learning rate", epoch, mean)
		}
		if set.Progress != nil {
			set.Progress(epoch, set.Epochs, mean, float64(correct)/float64(rows))
		}
	}
	return net, nil
}

// initNetwork returns a network with the input standardisation of X and
// weights drawn for the widths sizes (input, hidden…, output).
func initNetwork(X *mat.Dense, sizes []int, rng *rand.Rand) *Network {
	rows, d := X.Dims()
	net := &Network{Mean: make([]float64, d), Scale: make([]float64, d)}
	for i := range rows {
		for j, v := range X.RawRowView(i) {
			net.Mean[j] += v
		}
	}
	for j := range net.Mean {
		net.Mean[j] /= float64(rows)
	}
	for i := range rows {
		for j, v := range X.RawRowView(i) {
			dv := v - net.Mean[j]
			net.Scale[j] += dv * dv
		}
	}
	for j, ss := range net.Scale {
		sd := math.Sqrt(ss / float64(rows))
		if sd > 0 {
			net.Scale[j] = 1 / sd
		} else {
			net.Scale[j] = 1
		}
	}
	for l := 1; l < len(sizes); l++ {
		in, out := sizes[l-1], sizes[l]
		gain := 2.0
		if l == len(sizes)-1 {
			gain = 1
		}
		sd := math.Sqrt(gain / float64(in))
		w := make([]float64, out*in)
		for i := range w {
			w[i] = sd * rng.NormFloat64()
		}
		net.Layers = append(net.Layers, Layer{W: mat.NewDense(out, in, w), B: make([]float64, out)})
	}
	return net
}

// trainer holds the buffers of backpropagation and Adam's moments.
type trainer struct {
	net   *Network
	sizes []int
	step  int
	// soft holds the soft targets of every row and weights their sample
	// weights (nil: uniform), for TrainSoft; soft is nil for Train.
	soft    *mat.Dense
	weights []float64

	h, hT  [][]float64 // h[l]: B×n_l activations (h[0] the input); hT[l] its transpose
	g, gT  [][]float64 // g[l]: B×n_l deltas of layer l (l ≥ 1); gT[l] its transpose
	wT     [][]float64 // wT[l]: W_lᵀ, n_{l−1}×n_l, for l ≥ 2
	dW     [][]float64 // gradients, same layout as W_l
	db     [][]float64
	mW, vW [][]float64 // Adam moments
	mb, vb [][]float64
}

func newTrainer(net *Network, batch int) *trainer {
	L := len(net.Layers)
	t := &trainer{net: net, sizes: []int{net.Inputs()}}
	for _, l := range net.Layers {
		t.sizes = append(t.sizes, len(l.B))
	}
	t.h = make([][]float64, L+1)
	t.hT = make([][]float64, L+1)
	t.g = make([][]float64, L+1)
	t.gT = make([][]float64, L+1)
	t.wT = make([][]float64, L+1)
	for l := 0; l <= L; l++ {
		t.h[l] = make([]float64, batch*t.sizes[l])
		t.hT[l] = make([]float64, batch*t.sizes[l])
		if l >= 1 {
			t.g[l] = make([]float64, batch*t.sizes[l])
			t.gT[l] = make([]float64, batch*t.sizes[l])
		}
		if l >= 2 {
			t.wT[l] = make([]float64, t.sizes[l-1]*t.sizes[l])
		}
	}
	for l := 1; l <= L; l++ {
		n := t.sizes[l] * t.sizes[l-1]
		t.dW = append(t.dW, make([]float64, n))
		t.mW = append(t.mW, make([]float64, n))
		t.vW = append(t.vW, make([]float64, n))
		t.db = append(t.db, make([]float64, t.sizes[l]))
		t.mb = append(t.mb, make([]float64, t.sizes[l]))
		t.vb = append(t.vb, make([]float64, t.sizes[l]))
	}
	return t
}

// lossGrad computes the mean cross-entropy of the rows idx of Xs
// (standardised) plus the weight decay, and its gradient in t.dW, t.db. It
// returns the loss (without the penalty) and the number of rows the
// network classifies correctly.
func (t *trainer) lossGrad(Xs *mat.Dense, y []int, idx []int, decay float64) (float64, int) {
	B := len(idx)
	L := len(t.net.Layers)
	dense := func(buf []float64, r, c int) *mat.Dense { return mat.NewDense(r, c, buf[:r*c]) }
	d0 := t.sizes[0]
	for i, r := range idx {
		copy(t.h[0][i*d0:(i+1)*d0], Xs.RawRowView(r))
	}
	for l := 1; l <= L; l++ {
		z := dense(t.h[l], B, t.sizes[l])
		linalg.MulABT(z, dense(t.h[l-1], B, t.sizes[l-1]), t.net.Layers[l-1].W)
		addBias(z, t.net.Layers[l-1].B, l < L)
	}
	var loss float64
	correct := 0
	if t.soft != nil {
		loss, correct = t.softDelta(idx)
	} else {
		// δ_L = (softmax(z) − e_y)/B.
		c := t.sizes[L]
		for i, r := range idx {
			z := t.h[L][i*c : (i+1)*c]
			if floats.MaxIdx(z) == y[r] {
				correct++
			}
			zy := z[y[r]]
			lse := softmaxRow(z)
			loss += lse - zy
			g := t.g[L][i*c : (i+1)*c]
			for k, p := range z {
				g[k] = p / float64(B)
			}
			g[y[r]] -= 1 / float64(B)
		}
		loss /= float64(B)
	}
	for l := L; l >= 1; l-- {
		in, out := t.sizes[l-1], t.sizes[l]
		transpose(t.gT[l], t.g[l], B, out)
		transpose(t.hT[l-1], t.h[l-1], B, in)
		// ∂/∂W_l = δ_lᵀ h_{l−1}.
		linalg.MulABT(dense(t.dW[l-1], out, in), dense(t.gT[l], out, B), dense(t.hT[l-1], in, B))
		W := t.net.Layers[l-1].W.RawMatrix().Data
		if decay > 0 {
			for k, w := range W {
				t.dW[l-1][k] += decay * w
			}
		}
		db := t.db[l-1]
		for k := range out {
			var s float64
			for _, v := range t.gT[l][k*B : (k+1)*B] {
				s += v
			}
			db[k] = s
		}
		if l == 1 {
			break
		}
		// δ_{l−1} = (δ_l W_l) ⊙ 1[h_{l−1} > 0].
		transpose(t.wT[l], W, out, in)
		gp := dense(t.g[l-1], B, in)
		linalg.MulABT(gp, dense(t.g[l], B, out), dense(t.wT[l], in, out))
		hp := t.h[l-1][:B*in]
		for k, v := range hp {
			if v <= 0 {
				t.g[l-1][k] = 0
			}
		}
	}
	return loss, correct
}

// adam takes one Adam step with the gradient in t.dW, t.db.
func (t *trainer) adam(lr float64) {
	t.step++
	bc1 := 1 - math.Pow(beta1, float64(t.step))
	bc2 := 1 - math.Pow(beta2, float64(t.step))
	a := lr / bc1
	s2 := 1 / math.Sqrt(bc2)
	for l, layer := range t.net.Layers {
		w := layer.W.RawMatrix().Data
		parallel(len(w), 1<<14, func(lo, hi int) {
			adamUpdate(w[lo:hi], t.dW[l][lo:hi], t.mW[l][lo:hi], t.vW[l][lo:hi], a, s2)
		})
		adamUpdate(layer.B, t.db[l], t.mb[l], t.vb[l], a, s2)
	}
}

// parallel calls fn on consecutive chunks of 0 … n−1 of the given size, in
// parallel. The chunks do not depend on the number of goroutines.
func parallel(n, chunk int, fn func(lo, hi int)) {
	if n <= chunk {
		fn(0, n)
		return
	}
	chunks := (n + chunk - 1) / chunk
	workers := min(runtime.GOMAXPROCS(0), chunks)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1)) - 1
				if c >= chunks {
					return
				}
				fn(c*chunk, min(n, (c+1)*chunk))
			}
		}()
	}
	wg.Wait()
}

// adamUpdate sets m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g² and
// p ← p − a·m/(√v·s2 + ε), with a = η/(1−β₁ᵗ) and s2 = 1/√(1−β₂ᵗ).
func adamUpdate(p, g, m, v []float64, a, s2 float64) {
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	for i := range p {
		gi := g[i]
		mi := beta1*m[i] + (1-beta1)*gi
		vi := beta2*v[i] + (1-beta2)*gi*gi
		m[i], v[i] = mi, vi
		p[i] -= a * mi / (math.Sqrt(vi)*s2 + adamEps)
	}
}

// transpose writes the c×r transpose of the r×c row-major src into dst.
func transpose(dst, src []float64, r, c int) {
	const blk = 32
	if r*c < 1<<15 {
		transposeCols(dst, src, r, c, 0, c)
		return
	}
	parallel((c+blk-1)/blk, 4, func(lo, hi int) {
		transposeCols(dst, src, r, c, lo*blk, min(c, hi*blk))
	})
}

// transposeCols writes columns j0 … j1−1 of src as rows of dst.
func transposeCols(dst, src []float64, r, c, j0, j1 int) {
	const blk = 32
	for i0 := 0; i0 < r; i0 += blk {
		for j0 := j0; j0 < j1; j0 += blk {
			for i := i0; i < min(r, i0+blk); i++ {
				row := src[i*c : (i+1)*c]
				for j := j0; j < min(j1, j0+blk); j++ {
					dst[j*r+i] = row[j]
				}
			}
		}
	}
}

// softDelta is lossGrad's output delta for soft targets t_i and sample
// weights s_i: the batch loss is Σ_i s_i CE(t_i, p_i) / Σ_i s_i, so
// δ_L,i = s_i (p_i − t_i) / Σ_i s_i. It returns that loss and the rows
// whose argmax matches their target's.
func (t *trainer) softDelta(idx []int) (float64, int) {
	L := len(t.net.Layers)
	c := t.sizes[L]
	var sum float64
	for _, r := range idx {
		sum += t.weight(r)
	}
	if sum == 0 {
		sum = 1
	}
	var loss float64
	correct := 0
	for i, r := range idx {
		z := t.h[L][i*c : (i+1)*c]
		target := t.soft.RawRowView(r)
		if floats.MaxIdx(z) == floats.MaxIdx(target) {
			correct++
		}
		var zt float64
		for k, v := range target {
			zt += v * z[k]
		}
		lse := softmaxRow(z)
		w := t.weight(r) / sum
		loss += w * (lse - zt)
		g := t.g[L][i*c : (i+1)*c]
		for k, p := range z {
			g[k] = w * (p - target[k])
		}
	}
	return loss, correct
}

// weight returns the sample weight of row r.
func (t *trainer) weight(r int) float64 {
	if t.weights == nil {
		return 1
	}
	return t.weights[r]
}
