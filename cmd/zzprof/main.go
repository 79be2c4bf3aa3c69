package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"gonum.org/v1/gonum/mat"
)

func main() {
	n, D := 14400, 2048
	X := mat.NewDense(n, D, nil)
	for i := range X.RawMatrix().Data {
		X.RawMatrix().Data[i] = float64((i*7919)%1000) / 1000
	}
	f, _ := os.Create("/tmp/sa.prof")
	pprof.StartCPUProfile(f)
	defer pprof.StopCPUProfile()
	t0 := time.Now()
	var G mat.SymDense
	G.SymOuterK(1, X.T())
	fmt.Println("gram", time.Since(t0))
	t0 = time.Now()
	var eig mat.EigenSym
	eig.Factorize(&G, true)
	fmt.Println("eig", time.Since(t0))
}
