package federate_test

import (
	"context"
	"fmt"
	"time"

	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/federate"
	"github.com/dadil/dadil/synth"
)

// Three source sites and a target site learn a dictionary over an
// embedded NATS server without sharing their rows; the target classifies
// its own rows with DaDiL-R.
func Example() {
	srv, err := federate.StartServer(federate.ServerConfig{Token: "s3cret"})
	if err != nil {
		panic(err)
	}
	defer srv.Shutdown()
	p := synth.Generate(synth.Default(), 1)
	cfg := federate.Config{
		Rounds: 15, LocalEpochs: 5, Fraction: 1, Aggregation: federate.Average,
		RoundTimeout: 30 * time.Second, JoinTimeout: 30 * time.Second, Seed: 5,
		Settings: dictionary.Settings{Samples: 90, Batch: 30},
	}
	res, sites, err := federate.RunProblem(context.Background(), srv.ClientURL(), "s3cret", p, cfg, federate.SiteConfig{})
	if err != nil {
		panic(err)
	}
	target := sites[len(sites)-1]
	fmt.Println("sites:", res.Sites)
	fmt.Println("rounds:", len(res.Rounds), "answered in the last:", len(res.Rounds[14].Answered))
	fmt.Println("DaDiL-R above 90%:", target.AccuracyR > 0.9)
	// Output:
	// sites: [source-1 source-2 source-3 target]
	// rounds: 15 answered in the last: 4
	// DaDiL-R above 90%: true
}
