package federate

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode"

	"github.com/dadil/dadil/dataset"
)

// SiteName returns the name of a domain as a site's name: its name with
// spaces, '.', '*' and '>' as '-', or "site-<i>" if it has none.
func SiteName(d dataset.Domain, i int) string {
	if d.Name == "" {
		return fmt.Sprintf("site-%d", i)
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '.' || r == '*' || r == '>' {
			return '-'
		}
		return r
	}, d.Name)
}

// RunProblem runs a whole federation in this process: the coordinator and
// one site per domain of p (its sources, then its target, scored against
// p.Test's labels when p has them, on p.Test's rows when they are not the
// target's: a benchmark's test fold), each on its own connection to the
// server at url, as goroutines. site is the template of every site's
// configuration (Subject, Workers, timeouts, Classifier, Log); cfg.Sites is
// set to the number of domains. It returns the coordinator's result and
// every site's, sources first.
func RunProblem(ctx context.Context, url, token string, p *dataset.Problem, cfg Config, site SiteConfig) (*Result, []*SiteResult, error) {
	return runProblemSites(ctx, url, tokenConns(token), p, cfg, site, len(p.Sources)+1)
}

// tokenConns returns the connection options of the coordinator (site "")
// and of every site with the token.
func tokenConns(token string) func(site string) ConnOptions {
	return func(site string) ConnOptions { return ConnOptions{Token: token} }
}

// runProblemSites is RunProblem with a federation of sites sites, of which
// those beyond the problem's domains join on their own, and connections
// as conn says: the coordinator's conn(""), a site's conn(its name).
func runProblemSites(ctx context.Context, url string, conn func(site string) ConnOptions, p *dataset.Problem, cfg Config, site SiteConfig, sites int) (*Result, []*SiteResult, error) {
	cfg.Sites = sites
	site.Subject = cfg.Subject
	co := conn("")
	co.Name = "dadil coordinator"
	cnc, err := Dial(url, co)
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
				if p.Test.X != p.Target.X {
					sc.TestX = p.Test.X
				}
			}
		}
		wg.Go(func() {
			co := conn(sc.Name)
			co.Name, co.Subject, co.Site = "dadil site "+sc.Name, sc.Subject, sc.Name
			nc, err := Dial(url, co)
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
