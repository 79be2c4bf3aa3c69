package bench_test

import (
	"fmt"

	"github.com/dadil/dadil/bench"
)

// The CWRU experiment's file map is data: which recording holds which
// class under which motor load. LoadCWRU reads the recordings it lists and
// RunCWRU runs the paper's pipeline on them.
func Example() {
	files := bench.CWRUFiles()
	perDomain := map[string]int{}
	for _, f := range files {
		perDomain[f.Domain]++
	}
	fmt.Println("recordings:", len(files), "per load:", perDomain["1772"], perDomain["1750"], perDomain["1730"])
	fmt.Println("first:", files[0].Path, files[0].Class, files[0].Variable)
	fmt.Println("methods:", len(bench.CWRUMethodNames()), "first:", bench.CWRUMethodNames()[0])
	// Output:
	// recordings: 30 per load: 10 10 10
	// first: normal/98.mat normal X098_DE_time
	// methods: 18 first: mlp
}
