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

// TestFederateSuiteSweep prints, for every target of the development
// suite's sets, federated DaDiL-R's score (balanced accuracy on the sets
// scored so, accuracy otherwise) under variants of the flags of dadil
// federate serve: the comparison behind its defaults beside Caltech-Office
// (docs/federate.md). Every domain is a site, goroutines on one embedded
// server. It runs only when DADIL_SUITE names the folder of the suite's
// data; DADIL_FED_SETS lists the sets (default heart-disease,landmine),
// DADIL_FED_SEED the seed (default 1), DADIL_FED_VARIANTS the variants,
// separated by ';', each a list of flags ("" the defaults; default: the
// defaults, --share-moments, and --source-logits=false):
//
//	DADIL_SUITE=$PWD/../shared/data go test ./cmd/dadil -run FederateSuiteSweep -v -timeout 1h
func TestFederateSuiteSweep(t *testing.T) {
	dir := os.Getenv("DADIL_SUITE")
	if dir == "" {
		t.Skip("DADIL_SUITE does not name the development suite's folder (../shared/data)")
	}
	names := []string{"heart-disease", "landmine"}
	if v := os.Getenv("DADIL_FED_SETS"); v != "" {
		names = strings.Split(v, ",")
	}
	variants := []string{"", "--share-moments", "--source-logits=false"}
	if v, ok := os.LookupEnv("DADIL_FED_VARIANTS"); ok {
		variants = strings.Split(v, ";")
	}
	var seed uint64 = 1
	if v := os.Getenv("DADIL_FED_SEED"); v != "" {
		if _, err := fmt.Sscan(v, &seed); err != nil {
			t.Fatalf("DADIL_FED_SEED %q: %v", v, err)
		}
	}
	cfgs := make([]federate.Config, len(variants))
	for i, v := range variants {
		var r roundFlags
		fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		r.register(fs)
		var err error
		if err = fs.Parse(strings.Fields(v)); err == nil {
			cfgs[i], err = r.config(fs)
		}
		if err != nil {
			t.Fatalf("variant %q: %v", v, err)
		}
		cfgs[i].Seed = seed
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
		sum := make([]float64, len(variants))
		for ti := range s.Domains {
			ld, err := s.Problem(ti)
			if err != nil {
				t.Fatal(err)
			}
			var line []string
			for i, cfg := range cfgs {
				cfg.Subject = fmt.Sprintf("sweep.%d.%d", ti, i)
				_, sites, err := federate.RunProblem(context.Background(), srv.ClientURL(), "sweep", ld.Problem, cfg, federate.SiteConfig{Workers: 1})
				if err != nil {
					t.Fatal(err)
				}
				tg := sites[len(sites)-1]
				score := 100 * tg.AccuracyR
				if s.Balanced {
					b, err := classify.BalancedAccuracy(tg.PredictR, ld.Problem.Test.Y)
					if err != nil {
						t.Fatal(err)
					}
					score = 100 * b
				}
				sum[i] += score
				line = append(line, fmt.Sprintf("[%s] %.2f", variants[i], score))
			}
			t.Logf("%s, target %s: %s", s.Name, s.Domains[ti].Name, strings.Join(line, ", "))
		}
		var line []string
		for i, v := range variants {
			line = append(line, fmt.Sprintf("[%s] %.2f", v, sum[i]/float64(len(s.Domains))))
		}
		t.Logf("%s, seed %d, mean over %d targets: %s", s.Name, seed, len(s.Domains), strings.Join(line, ", "))
	}
}
