package mlp

import (
	"errors"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/npy"
)

// blobs returns n rows per class of c Gaussian clusters in d dimensions with
// centres sep apart along distinct axes, plus an informative-free offset.
func blobs(rng *rand.Rand, n, c, d int, sep float64) (*mat.Dense, []int) {
	X := mat.NewDense(n*c, d, nil)
	y := make([]int, n*c)
	for k := range c {
		for i := range n {
			r := k*n + i
			y[r] = k
			for j := range d {
				v := rng.NormFloat64() + 100 // a large offset the standardisation removes
				if j == k%d {
					v += sep
				}
				X.Set(r, j, v)
			}
		}
	}
	return X, y
}

// penalisedLoss is the training objective on rows idx of the standardised Xs.
func penalisedLoss(net *Network, Xs *mat.Dense, y, idx []int, decay float64) float64 {
	var loss float64
	for _, r := range idx {
		h := mat.NewDense(1, Xs.RawMatrix().Cols, append([]float64(nil), Xs.RawRowView(r)...))
		for l, layer := range net.Layers {
			z := mat.NewDense(1, len(layer.B), nil)
			z.Mul(h, layer.W.T())
			addBias(z, layer.B, l < len(net.Layers)-1)
			h = z
		}
		zr := h.RawRowView(0)
		zy := zr[y[r]]
		loss += softmaxRow(zr) - zy
	}
	loss /= float64(len(idx))
	for _, layer := range net.Layers {
		f := mat.Norm(layer.W, 2) // Frobenius norm
		loss += decay / 2 * f * f
	}
	return loss
}

func TestGradientMatchesFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	X, y := blobs(rng, 4, 3, 5, 1)
	for _, tc := range []struct {
		name   string
		hidden []int
		decay  float64
	}{
		{"two hidden layers", []int{6, 4}, 0},
		{"weight decay", []int{6, 4}, 0.3},
		{"no hidden layer", []int{}, 0.1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			net := initNetwork(X, append(append([]int{5}, tc.hidden...), 3), rng)
			for _, l := range net.Layers {
				for k := range l.B {
					l.B[k] = 0.1 * rng.NormFloat64()
				}
			}
			Xs := standardise(X, net.Mean, net.Scale)
			idx := []int{0, 3, 5, 7, 8, 11, 2}
			tr := newTrainer(net, len(idx))
			tr.lossGrad(Xs, y, idx, tc.decay)
			const h = 1e-6
			check := func(name string, p []float64, g []float64) {
				for k := range p {
					old := p[k]
					p[k] = old + h
					up := penalisedLoss(net, Xs, y, idx, tc.decay)
					p[k] = old - h
					down := penalisedLoss(net, Xs, y, idx, tc.decay)
					p[k] = old
					fd := (up - down) / (2 * h)
					if math.Abs(fd-g[k]) > 1e-6*(1+math.Abs(fd)) {
						t.Fatalf("%s[%d]: gradient %v, finite difference %v", name, k, g[k], fd)
					}
				}
			}
			for l, layer := range net.Layers {
				check("W"+string(rune('1'+l)), layer.W.RawMatrix().Data, tr.dW[l])
				check("b"+string(rune('1'+l)), layer.B, tr.db[l])
			}
		})
	}
}

// penalisedLoss relies on mat.Norm(W, 2) being the Frobenius norm.
func TestPenaltyUsesFrobeniusNorm(t *testing.T) {
	W := mat.NewDense(2, 2, []float64{1, 2, 3, 4})
	if got := mat.Norm(W, 2); math.Abs(got*got-30) > 1e-12 {
		t.Fatalf("mat.Norm(W, 2)² = %v, want ‖W‖²_F = 30", got*got)
	}
}

func TestTrainLearnsBlobs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	X, y := blobs(rng, 200, 4, 8, 3)
	Xt, yt := blobs(rng, 100, 4, 8, 3)
	var losses []float64
	net, err := Train(X, y, 4, &Settings{Hidden: []int{32, 16}, Epochs: 15, Batch: 32, Seed: 1,
		Progress: func(e, n int, loss, acc float64) { losses = append(losses, loss) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(losses) != 15 || !(losses[14] < 0.5*losses[0]) {
		t.Errorf("losses %v: want 15 epochs, the last below half the first", losses)
	}
	pred, err := net.Predict(Xt)
	if err != nil {
		t.Fatal(err)
	}
	ok := 0
	for i := range pred {
		if pred[i] == yt[i] {
			ok++
		}
	}
	// The Bayes accuracy of these clusters is about 93%.
	if acc := float64(ok) / float64(len(pred)); acc < 0.88 {
		t.Errorf("held-out accuracy %.3f, want ≥ 0.88", acc)
	}
	E, err := net.Embed(Xt)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := E.Dims(); r != 400 || c != 16 || net.EmbedDim() != 16 {
		t.Fatalf("embedding %d×%d (EmbedDim %d), want 400×16", r, c, net.EmbedDim())
	}
	if mat.Min(E) < 0 {
		t.Error("embedding holds negative values: ReLU activations expected")
	}
	P, _ := net.Proba(Xt.Slice(0, 3, 0, 8).(*mat.Dense))
	for i := range 3 {
		if s := mat.Sum(P.RowView(i)); math.Abs(s-1) > 1e-12 {
			t.Errorf("probabilities of row %d sum to %v", i, s)
		}
	}
}

func TestTrainDeterministicAcrossGOMAXPROCS(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	X, y := blobs(rng, 150, 3, 40, 2)
	s := &Settings{Hidden: []int{64, 32}, Epochs: 3, Batch: 50, Seed: 9}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var ref *Network
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		net, err := Train(X, y, 3, s)
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = net
			continue
		}
		for l := range net.Layers {
			if !mat.Equal(net.Layers[l].W, ref.Layers[l].W) {
				t.Fatalf("GOMAXPROCS=%d: layer %d weights differ from GOMAXPROCS=1", procs, l+1)
			}
		}
	}
	other, _ := Train(X, y, 3, &Settings{Hidden: []int{64, 32}, Epochs: 3, Batch: 50, Seed: 10})
	if mat.Equal(other.Layers[0].W, ref.Layers[0].W) {
		t.Error("seeds 9 and 10 gave the same network")
	}
}

func TestTrainErrors(t *testing.T) {
	X := mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 6})
	nan := mat.NewDense(3, 2, []float64{1, 2, 3, math.NaN(), 5, 6})
	for _, tc := range []struct {
		name    string
		X       *mat.Dense
		y       []int
		classes int
		s       *Settings
		msg     string
	}{
		{"labels", X, []int{0, 1}, 2, nil, "2 labels for 3 rows"},
		{"unknown class", X, []int{0, 1, 2}, 2, nil, "label of row 3 is 2, not a class in 0 … 1"},
		{"one class", X, []int{0, 0, 0}, 1, nil, "1 classes"},
		{"NaN", nan, []int{0, 1, 0}, 2, nil, "row 2, column 2 is NaN"},
		{"nil", nil, nil, 2, nil, "no data"},
		{"width", X, []int{0, 1, 0}, 2, &Settings{Hidden: []int{3, 0}}, "hidden layer 2 has width 0"},
		{"rate", X, []int{0, 1, 0}, 2, &Settings{LearningRate: math.NaN()}, "learning rate NaN"},
		{"diverged", X, []int{0, 1, 0}, 2, &Settings{Hidden: []int{}, LearningRate: 1e308, Epochs: 3}, "diverged"},
	} {
		if _, err := Train(tc.X, tc.y, tc.classes, tc.s); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.msg)
		}
	}
	net, _ := Train(X, []int{0, 1, 0}, 2, &Settings{Hidden: []int{4}, Epochs: 1})
	if _, err := net.Predict(mat.NewDense(1, 3, nil)); err == nil || !strings.Contains(err.Error(), "3 features, the network 2") {
		t.Errorf("wrong width: %v", err)
	}
}

func TestSaveLoad(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	X, y := blobs(rng, 30, 3, 6, 2)
	net, err := Train(X, y, 3, &Settings{Hidden: []int{8, 5}, Epochs: 2, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "enc.npz")
	if err := net.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := net.Embed(X)
	b, _ := back.Embed(X)
	if !mat.Equal(a, b) {
		t.Fatal("loaded network embeds differently")
	}
	arrays, err := npy.ReadNPZ(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(m map[string]*npy.Array)
		msg    string
	}{
		{"version", func(m map[string]*npy.Array) { m["mlp_version"].Data[0] = 2 }, "newer dadil"},
		{"no version", func(m map[string]*npy.Array) { delete(m, "mlp_version") }, "not a network file"},
		{"gap", func(m map[string]*npy.Array) { m["W4"] = m["W3"]; m["b4"] = m["b3"]; delete(m, "W3") }, "W3 is missing"},
		{"bias", func(m map[string]*npy.Array) { delete(m, "b2") }, "b2 is missing"},
		{"chain", func(m map[string]*npy.Array) { m["W2"] = &npy.Array{Shape: []int{5, 7}, Data: make([]float64, 35)} }, "W2 is 5×7, want 8 columns"},
		{"NaN", func(m map[string]*npy.Array) { m["W1"].Data[3] = math.NaN() }, "W1[1, 4] is NaN"},
		{"extra", func(m map[string]*npy.Array) { m["junk"] = &npy.Array{Shape: []int{1}, Data: []float64{1}} }, "unexpected member junk"},
	} {
		m := map[string]*npy.Array{}
		for k, v := range arrays {
			m[k] = &npy.Array{Shape: v.Shape, Data: append([]float64(nil), v.Data...)}
		}
		tc.change(m)
		p := filepath.Join(t.TempDir(), tc.name+".npz")
		if err := npy.WriteNPZ(p, m); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want an error naming the file and containing %q", tc.name, err, tc.msg)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "absent.npz")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent file: %v", err)
	}
	// A network edited by hand into shapes that do not chain is an error
	// at prediction, not a panic.
	bad := *net
	bad.Layers = append([]Layer(nil), net.Layers...)
	bad.Layers[0].W = mat.NewDense(8, 5, nil)
	if _, err := bad.Predict(X); err == nil || !strings.Contains(err.Error(), "W1 is 8×5, want 6 columns") {
		t.Errorf("predict with W1 of the wrong width: %v", err)
	}
	var empty Network
	if _, err := empty.Embed(X); err == nil || empty.Classes() != 0 {
		t.Errorf("empty network: Embed error %v, %d classes", err, empty.Classes())
	}
}

func FuzzLoad(f *testing.F) {
	rng := rand.New(rand.NewPCG(9, 9))
	X, y := blobs(rng, 5, 2, 3, 2)
	net, _ := Train(X, y, 2, &Settings{Hidden: []int{3}, Epochs: 1})
	dir := f.TempDir()
	p := filepath.Join(dir, "seed.npz")
	if err := net.Save(p); err != nil {
		f.Fatal(err)
	}
	seed, _ := os.ReadFile(p)
	f.Add(seed)
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tmp, err := os.CreateTemp(dir, "fuzz-*.npz")
		if err != nil {
			t.Fatal(err)
		}
		p := tmp.Name()
		defer os.Remove(p)
		_, err = tmp.Write(data)
		if cerr := tmp.Close(); err != nil || cerr != nil {
			t.Fatal(err, cerr)
		}
		n, err := Load(p)
		if err != nil {
			return
		}
		// A network that loads must be usable.
		if _, err := n.Embed(mat.NewDense(1, n.Inputs(), nil)); err != nil {
			t.Fatalf("loaded network cannot embed: %v", err)
		}
	})
}
