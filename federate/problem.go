package federate

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/dadil/dadil/dataset"
)

// Connect connects to the NATS server at url with the token ("" for
// none), retrying the first connection briefly and reconnecting for ever
// after a server restart.
func Connect(url, token, name string) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond), nats.RetryOnFailedConnect(false)}
	if token != "" {
		opts = append(opts, nats.Token(token))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("federate: connect to %s: %w", url, err)
	}
	return nc, nil
}

// SiteName returns the name of a domain as a site's name: its name with
// spaces as '-', or "site-<i>" if it has none.
func SiteName(d dataset.Domain, i int) string {
	if d.Name == "" {
		return fmt.Sprintf("site-%d", i)
	}
	return strings.ReplaceAll(d.Name, " ", "-")
}

// RunProblem runs a whole federation in this process: the coordinator and
// one site per domain of p (its sources, then its target, scored against
// p.Test's labels when p has them), each on its own connection to the
// server at url, as goroutines. site is the template of every site's
// configuration (Subject, Workers, timeouts, Classifier, Log); cfg.Sites is
// set to the number of domains. It returns the coordinator's result and
// every site's, sources first.
func RunProblem(ctx context.Context, url, token string, p *dataset.Problem, cfg Config, site SiteConfig) (*Result, []*SiteResult, error) {
	return runProblemSites(ctx, url, token, p, cfg, site, len(p.Sources)+1)
}

// runProblemSites is RunProblem with a federation of sites sites, of which
// those beyond the problem's domains join on their own.
func runProblemSites(ctx context.Context, url, token string, p *dataset.Problem, cfg Config, site SiteConfig, sites int) (*Result, []*SiteResult, error) {
	cfg.Sites = sites
	site.Subject = cfg.Subject
	cnc, err := Connect(url, token, "dadil coordinator")
	if err != nil {
		return nil, nil, err
	}
	defer cnc.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	nd := len(p.Sources) + 1
	results := make([]*SiteResult, nd)
	errs := make([]error, nd+1)
	var wg sync.WaitGroup
	for i, d := range p.Domains() {
		sc := site
		sc.Name, sc.X = SiteName(d, i), d.X
		if i < len(p.Sources) {
			sc.Labels = d.Y
		} else {
			sc.Target = true
			if p.Test != nil {
				sc.TestLabels = p.Test.Y
			}
		}
		wg.Go(func() {
			nc, err := Connect(url, token, "dadil site "+sc.Name)
			if err != nil {
				errs[i] = err
				return
			}
			defer nc.Close()
			results[i], errs[i] = Join(ctx, nc, sc)
		})
	}
	res, err := Serve(ctx, cnc, cfg)
	if err != nil {
		cancel()
	}
	wg.Wait()
	errs[nd] = err
	for _, e := range errs {
		if e != nil {
			return res, results, e
		}
	}
	return res, results, nil
}
