package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/dadil/dadil/bench"
	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/federate"
)

// TestFederateSourceLogitsSweep prints, for every target of the
// development suite's sets, federated DaDiL-R's score (balanced accuracy
// on the sets scored so, accuracy otherwise) with the defaults of dadil
// federate serve, with and without --source-logits: the comparison behind
// that default beside Caltech-Office (docs/federate.md). Every domain is a
// site, goroutines on one embedded server. It runs only when DADIL_SUITE
// names the folder of the suite's data; DADIL_FED_SETS lists the sets
// (default heart-disease,landmine), DADIL_FED_SEED the seed (default 1):
//
//	DADIL_SUITE=$PWD/../shared/data go test ./cmd/dadil -run FederateSourceLogitsSweep -v -timeout 1h
func TestFederateSourceLogitsSweep(t *testing.T) {
	dir := os.Getenv("DADIL_SUITE")
	if dir == "" {
		t.Skip("DADIL_SUITE does not name the development suite's folder (../shared/data)")
	}
	names := []string{"heart-disease", "landmine"}
	if v := os.Getenv("DADIL_FED_SETS"); v != "" {
		names = strings.Split(v, ",")
	}
	var seed uint64 = 1
	if v := os.Getenv("DADIL_FED_SEED"); v != "" {
		if _, err := fmt.Sscan(v, &seed); err != nil {
			t.Fatalf("DADIL_FED_SEED %q: %v", v, err)
		}
	}
	sets, notes, err := bench.LoadSuite(dir, names, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		t.Log(n)
	}
	srv, err := federate.StartServer(federate.ServerConfig{Token: "sweep"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	for _, s := range sets {
		var sum [2]float64
		for ti := range s.Domains {
			ld, err := s.Problem(ti)
			if err != nil {
				t.Fatal(err)
			}
			var score [2]float64
			for i, src := range []bool{false, true} {
				var r roundFlags
				fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
				fs.SetOutput(io.Discard)
				r.register(fs)
				cfg, err := r.config(fs)
				if err != nil {
					t.Fatal(err)
				}
				cfg.SourceLogits, cfg.Seed, cfg.Subject = src, seed, fmt.Sprintf("sweep.%d.%d", ti, i)
				_, sites, err := federate.RunProblem(context.Background(), srv.ClientURL(), "sweep", ld.Problem, cfg, federate.SiteConfig{Workers: 1})
				if err != nil {
					t.Fatal(err)
				}
				tg := sites[len(sites)-1]
				score[i] = 100 * tg.AccuracyR
				if s.Balanced {
					b, err := classify.BalancedAccuracy(tg.PredictR, ld.Problem.Test.Y)
					if err != nil {
						t.Fatal(err)
					}
					score[i] = 100 * b
				}
				sum[i] += score[i]
			}
			t.Logf("%s, target %s: all sites %.2f, sources %.2f", s.Name, s.Domains[ti].Name, score[0], score[1])
		}
		n := float64(len(s.Domains))
		t.Logf("%s, seed %d, mean over %d targets: logits' mean over all sites %.2f, over the sources %.2f", s.Name, seed, len(s.Domains), sum[0]/n, sum[1]/n)
	}
}
