package classify

import (
	"bytes"
	"encoding/json"
	"math"
	"os/exec"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// python is the interpreter used for the SciPy cross-check: the system one,
// with Debian's python3-scipy.
const python = "/usr/bin/python3"

// scipyFit minimises L with scipy.optimize.minimize(method="L-BFGS-B",
// jac=True), written independently from the package documentation, and
// returns the optimal loss and parameters θ = [vec(W); b], or skips the
// test when SciPy is not available.
func scipyFit(t *testing.T, X, T *mat.Dense, w []float64, lambda float64) (float64, []float64) {
	t.Helper()
	const script = `
import json, sys
import numpy as np
import scipy
from scipy.optimize import minimize
from scipy.special import logsumexp
d = json.load(sys.stdin)
X, T, s, lam = np.array(d["X"]), np.array(d["T"]), np.array(d["w"]), d["lambda"]
n, dim = X.shape
c = T.shape[1]
S = s.sum()
def f(theta):
    W = theta[:c*dim].reshape(c, dim)
    b = theta[c*dim:]
    Z = X @ W.T + b
    lse = logsumexp(Z, axis=1, keepdims=True)
    logp = Z - lse
    loss = -(s[:, None] * T * logp).sum() / S + lam * (W * W).sum()
    R = s[:, None] * (np.exp(logp) * T.sum(axis=1, keepdims=True) - T) / S
    gW = R.T @ X + 2 * lam * W
    gb = R.sum(axis=0)
    return loss, np.concatenate([gW.ravel(), gb])
r = minimize(f, np.zeros(c*dim + c), jac=True, method="L-BFGS-B",
             options={"maxiter": 100000, "maxfun": 100000, "ftol": 1e-15, "gtol": 1e-11, "maxcor": 20})
json.dump({"loss": r.fun, "theta": r.x.tolist(), "gnorm": float(np.abs(r.jac).max()),
           "nit": int(r.nit), "message": str(r.message), "version": scipy.__version__}, sys.stdout)
`
	if err := exec.Command(python, "-c", "import scipy.optimize, scipy.special").Run(); err != nil {
		t.Skipf("SciPy not available (%s -c 'import scipy.optimize': %v); skipping the cross-check", python, err)
	}
	rows := func(M *mat.Dense) [][]float64 {
		r, _ := M.Dims()
		out := make([][]float64, r)
		for i := range out {
			out[i] = mat.Row(nil, i, M)
		}
		return out
	}
	in, err := json.Marshal(map[string]any{"X": rows(X), "T": rows(T), "w": w, "lambda": lambda})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("SciPy failed: %v\n%s", err, stderr.String())
	}
	var res struct {
		Loss    float64
		Theta   []float64
		GNorm   float64
		Nit     int
		Message string
		Version string
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	t.Logf("SciPy %s L-BFGS-B: loss %.15g, ‖∇L‖∞ %.3g after %d iterations (%s)", res.Version, res.Loss, res.GNorm, res.Nit, res.Message)
	return res.Loss, res.Theta
}

func TestAgainstSciPy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n, d, c  int
		soft     bool
		weighted bool
		lambda   float64
	}{
		{"labels λ=1e-3", 120, 6, 3, false, false, 1e-3},
		{"soft weighted λ=1e-3", 150, 8, 4, true, true, 1e-3},
		{"soft weighted λ=0.1", 90, 5, 5, true, true, 0.1},
		{"counts λ=1e-3", 200, 30, 4, false, true, 1e-3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := newRand(uint64(tc.n))
			var X *mat.Dense
			var labels []int
			if tc.name == "counts λ=1e-3" {
				X, labels = overlappingCounts(tc.n, tc.d, tc.c, 5)
			} else {
				_, X, labels = clusters(rng, tc.n, tc.d, tc.c, 1.5)
			}
			T := oneHot(labels, tc.c)
			if tc.soft {
				T = softTargets(rng, labels, tc.c)
			}
			w := make([]float64, tc.n)
			for i := range w {
				w[i] = 1
				if tc.weighted {
					w[i] = rng.ExpFloat64()
				}
			}
			m, r, err := Fit(X, T, w, &Settings{L2: tc.lambda, GradTol: 1e-9})
			if err != nil {
				t.Fatal(err)
			}
			want, theta := scipyFit(t, X, T, w, tc.lambda)
			var diff float64
			for i, v := range m.W.RawMatrix().Data {
				diff = math.Max(diff, math.Abs(v-theta[i]))
			}
			for k, v := range m.B {
				diff = math.Max(diff, math.Abs(v-theta[tc.c*tc.d+k]))
			}
			rel := (r.Loss - want) / want
			t.Logf("classify: loss %.15g, ‖∇L‖∞ %.3g after %d iterations; relative loss difference %.2g, max parameter difference %.2g",
				r.Loss, r.GradNorm, r.Iterations, rel, diff)
			if math.Abs(rel) > 1e-6 {
				t.Errorf("loss %.15g, SciPy %.15g", r.Loss, want)
			}
			if diff > 1e-3 {
				t.Errorf("parameters differ from SciPy's by up to %g", diff)
			}
		})
	}
}
