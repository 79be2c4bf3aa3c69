package federate

import (
	"context"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dadil/dadil/synth"
)

// startJetStream starts an embedded server with JetStream storing in a
// temporary folder.
func startJetStream(t *testing.T) string {
	t.Helper()
	s, err := StartServer(ServerConfig{Token: "secret", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

// runSites joins the problem's domains as goroutines and returns a
// function that waits for them and returns their results.
func runSites(t *testing.T, ctx context.Context, url, subject string) func() []*SiteResult {
	t.Helper()
	p := synth.Generate(synth.Default(), 1)
	doms := p.Domains()
	res := make([]*SiteResult, len(doms))
	var wg sync.WaitGroup
	for i, d := range doms {
		sc := SiteConfig{Subject: subject, Name: SiteName(d, i), X: d.X, Workers: 1}
		if i < len(p.Sources) {
			sc.Labels = d.Y
		} else {
			sc.Target, sc.TestLabels = true, p.Test.Y
		}
		wg.Go(func() {
			nc, err := Connect(url, "secret", sc.Name)
			if err != nil {
				t.Error(err)
				return
			}
			defer nc.Close()
			if res[i], err = Join(ctx, nc, sc); err != nil {
				t.Errorf("site %s: %v", sc.Name, err)
			}
		})
	}
	return func() []*SiteResult { wg.Wait(); return res }
}

// serveOnce runs a coordinator on its own connection; stopAfter > 0 stops
// it (as a crash would) once round stopAfter has completed.
func serveOnce(t *testing.T, ctx context.Context, url string, cfg Config, stopAfter int) (*Result, error) {
	t.Helper()
	nc, err := Connect(url, "secret", "coordinator")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg.Progress = func(st RoundStats) {
		if st.Round == stopAfter {
			cancel()
		}
	}
	return Serve(ctx, nc, cfg)
}

// TestCoordinatorResumes stops a coordinator after round 3 of 7 and starts
// another on the same state: it resumes at round 4, and the final atoms
// are bit-identical to those of an uninterrupted federation, also with a
// server optimiser whose moments the state keeps.
func TestCoordinatorResumes(t *testing.T) {
	url := startJetStream(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := testConfig(7)
	cfg.Sites, cfg.State = 4, "state"
	adam := cfg
	adam.Server, adam.Aggregation = Server{Optimizer: ServerAdam, LR: 0.05}, WBary
	resumeAndCompare(t, ctx, url, adam, "test.adam")
	shared := cfg
	shared.KeepLocalState, shared.ShareMoments = true, true
	resumeAndCompare(t, ctx, url, shared, "test.shared")
	resumeAndCompare(t, ctx, url, cfg, "test")
	// The finished federation's state is gone: a new coordinator waits
	// for sites again.
	cfg.JoinTimeout, cfg.Subject = 200*time.Millisecond, "test.resumed"
	if _, err := serveOnce(t, ctx, url, cfg, 0); err == nil || !strings.Contains(err.Error(), "0 of 4 sites joined") {
		t.Errorf("a coordinator after the end: %v", err)
	}
}

// resumeAndCompare runs the federation cfg whole, then stopped after round
// 3 and resumed, under subjects prefixed by prefix, and compares them.
func resumeAndCompare(t *testing.T, ctx context.Context, url string, cfg Config, prefix string) {
	t.Helper()
	run := func(subject string, stopAfter int) (*Result, []*SiteResult) {
		cfg.Subject = subject
		wait := runSites(t, ctx, url, subject)
		if stopAfter > 0 {
			if _, err := serveOnce(t, ctx, url, cfg, stopAfter); err == nil {
				t.Fatal("the stopped coordinator finished")
			}
		}
		rec := &logRecorder{}
		cfg.Log = rec.log
		res, err := serveOnce(t, ctx, url, cfg, 0)
		if err != nil {
			t.Fatal(err)
		}
		if stopAfter > 0 && !rec.has("resumed the federation of 4 sites after round 3") {
			t.Errorf("remarks %q", rec.lines)
		}
		return res, wait()
	}
	whole, _ := run(prefix+".whole", 0)
	res, sites := run(prefix+".resumed", 3)
	if res.FirstRound != 4 || len(res.Rounds) != 4 || res.Acknowledged != 4 || res.Scaler == nil {
		t.Fatalf("resumed at round %d, %d rounds, %d acknowledgements, scaling %v", res.FirstRound, len(res.Rounds), res.Acknowledged, res.Scaler)
	}
	for _, st := range res.Rounds {
		if len(st.Answered) != 4 {
			t.Errorf("round %d answered by %v", st.Round, st.Answered)
		}
	}
	if !atomsEqual(res.Atoms, whole.Atoms) {
		t.Errorf("%s: the resumed federation's atoms differ from the uninterrupted one's", prefix)
	}
	if tg := sites[3]; tg.Model == nil || len(tg.Trained) != 7 || !(tg.AccuracyR > 0.9) {
		t.Errorf("%s: target trained in rounds %v, accuracy %.3f", prefix, tg.Trained, tg.AccuracyR)
	}
}

func TestStateErrors(t *testing.T) {
	url := startJetStream(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := testConfig(5)
	cfg.Sites, cfg.State, cfg.Subject = 4, "state", "test.errors"
	wait := runSites(t, ctx, url, cfg.Subject)
	if _, err := serveOnce(t, ctx, url, cfg, 2); err == nil {
		t.Fatal("the stopped coordinator finished")
	}
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"seed", func(c *Config) { c.Seed++ }, "is of another federation"},
		{"rounds", func(c *Config) { c.Rounds = 1 }, "has run 2 rounds, more than the 1 asked"},
		{"bucket", func(c *Config) { c.State = "a.b" }, "state bucket"},
		{"server", func(c *Config) { c.Server.Optimizer = ServerAdam }, "has the server optimiser"},
		{"source logits", func(c *Config) { c.SourceLogits = !c.SourceLogits }, "averages the label logits over"},
		{"shared moments", func(c *Config) { c.KeepLocalState, c.ShareMoments = true, true }, "has shared second moments false, this coordinator true"},
	} {
		cc := cfg
		c.edit(&cc)
		if _, err := serveOnce(t, ctx, url, cc, 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	if _, err := serveOnce(t, ctx, url, cfg, 0); err != nil {
		t.Fatal(err)
	}
	wait()
	// A server without JetStream cannot keep the state.
	plain := startServer(t, "secret")
	if _, err := serveOnce(t, ctx, plain, cfg, 0); err == nil || !strings.Contains(err.Error(), "JetStream") {
		t.Errorf("no JetStream: %v", err)
	}
}

// TestParseStateMoments: a state keeps the server optimiser's moments
// after the atoms; a count or a length that does not match is refused.
func TestParseStateMoments(t *testing.T) {
	c := &coordinator{cfg: testConfig(3), labels: []int{0, 1}, shape: Shape{K: 1, N: 2, D: 1, C: 2}}
	c.cfg.Sites, c.cfg.Server = 1, Server{Optimizer: ServerAdam, LR: 0.05}
	c.sites = []*site{{hello: hello{Version: Version, Name: "a", Role: RoleSource, Features: 1, Labels: []int{0, 1}, Inbox: "test.fed.site.x"}}}
	atoms, m, v := []float64{1, 2, 3, 4, 5, 6}, []float64{.1, .2, .3, .4, .5, .6}, []float64{7, 8, 9, 10, 11, 12}
	meta := c.snapshot(2)
	s, got, err := parseState(encodeState(meta, atoms, m, v))
	if err != nil || s.Moments != 2 || s.Server != "adam lr=0.05 beta1=0.9 beta2=0.99 tau=0.001" || !slices.Equal(got, slices.Concat(atoms, m, v)) {
		t.Fatalf("%+v %v %v", s, got, err)
	}
	if _, _, err := parseState(encodeState(meta, atoms, m)); err == nil || !strings.Contains(err.Error(), "2 moment vectors") {
		t.Errorf("one moment vector of two: %v", err)
	}
	meta.Moments = 3
	if _, _, err := parseState(encodeState(meta, atoms, m, v, v)); err == nil || !strings.Contains(err.Error(), "at most 2") {
		t.Errorf("three moment vectors: %v", err)
	}
	meta.Moments = 2
	v[3] = math.Inf(1)
	if _, _, err := parseState(encodeState(meta, atoms, m, v)); err == nil || !strings.Contains(err.Error(), "is +Inf") {
		t.Errorf("an infinite moment: %v", err)
	}
	// The sites' mean second moments follow the server optimiser's.
	v[3] = 10
	c.cfg.ShareMoments, c.moments = true, []float64{1, 0, 2, 3, 4, 5}
	meta = c.snapshot(2)
	s, got, err = parseState(encodeState(meta, atoms, m, v, c.moments))
	if err != nil || !s.ShareMoments || !s.SiteMoments || !slices.Equal(got, slices.Concat(atoms, m, v, c.moments)) {
		t.Fatalf("shared moments: %+v %v %v", s, got, err)
	}
	if _, _, err := parseState(encodeState(meta, atoms, m, v)); err == nil || !strings.Contains(err.Error(), "3 moment vectors") {
		t.Errorf("the sites' moments missing: %v", err)
	}
	if _, _, err := parseState(encodeState(meta, atoms, m, v, []float64{1, -1, 2, 3, 4, 5})); err == nil || !strings.Contains(err.Error(), "second moment 1 is -1") {
		t.Errorf("a negative second moment: %v", err)
	}
	meta.ShareMoments = false
	if _, _, err := parseState(encodeState(meta, atoms, m, v, c.moments)); err == nil || !strings.Contains(err.Error(), "without shared moments") {
		t.Errorf("the sites' moments without sharing: %v", err)
	}
}

func FuzzParseState(f *testing.F) {
	c := &coordinator{cfg: testConfig(3), labels: []int{0, 1}, shape: Shape{K: 1, N: 2, D: 1, C: 2}}
	c.cfg.Sites = 1
	c.sites = []*site{{hello: hello{Version: Version, Name: "a", Role: RoleSource, Features: 1, Labels: []int{0, 1}, Inbox: "test.fed.site.x"}}}
	meta := c.snapshot(2)
	good := encodeState(meta, []float64{1, 2, 3, 4, 5, 6})
	f.Add(good)
	f.Add(good[:20])
	f.Add([]byte("DDLSTATE\xff\xff\xff\xff"))
	c.cfg.Server = Server{Optimizer: ServerAdam}
	f.Add(encodeState(c.snapshot(2), []float64{1, 2, 3, 4, 5, 6}, make([]float64, 6), make([]float64, 6)))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, atoms, err := parseState(b)
		if err != nil {
			return
		}
		if v, _ := s.Shape.Values(); len(atoms) != v*(1+s.Moments+s.siteMoments()) || len(s.Members) != s.Sites {
			t.Fatalf("accepted %d values for shape %v", len(atoms), s.Shape)
		}
	})
}

// TestServerRestart shuts the NATS server down after round 3 and starts
// another on the same port: the coordinator and the sites reconnect, the
// atoms of the round under way are sent again to the sites that have not
// answered, and every round has every site's update.
func TestServerRestart(t *testing.T) {
	srv, err := StartServer(ServerConfig{Token: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	port := srv.Addr().(*net.TCPAddr).Port
	url := srv.ClientURL()
	defer func() { srv.Shutdown() }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := testConfig(8)
	cfg.Sites, cfg.RoundTimeout = 4, 5*time.Second
	rec := &logRecorder{}
	cfg.Log = rec.log
	wait := runSites(t, ctx, url, cfg.Subject)
	nc, err := Connect(url, "secret", "coordinator")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	cfg.Progress = func(st RoundStats) {
		if st.Round != 3 {
			return
		}
		srv.Shutdown()
		srv.WaitForShutdown()
		if srv, err = StartServer(ServerConfig{Token: "secret", Port: port}); err != nil {
			t.Error(err)
		}
	}
	start := time.Now()
	res, err := Serve(ctx, nc, cfg)
	if err != nil {
		t.Fatal(err, rec.lines)
	}
	sites := wait()
	if len(res.Rounds) != 8 || res.Acknowledged != 4 || len(res.Rounds[7].Answered) != 4 || sites[3].Model == nil || !(sites[3].AccuracyR > 0.9) {
		t.Errorf("%d rounds, %d acknowledgements, the last answered by %v, target accuracy %.3f; remarks %q",
			len(res.Rounds), res.Acknowledged, res.Rounds[len(res.Rounds)-1].Answered, sites[3].AccuracyR, rec.lines)
	}
	for _, st := range res.Rounds {
		if len(st.Answered) != 4 {
			t.Errorf("round %d answered by %v; remarks %q", st.Round, st.Answered, rec.lines)
		}
	}
	t.Logf("%.1f s", time.Since(start).Seconds())
}
