//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dadil/dadil/federate"
	"github.com/dadil/dadil/internal/proctest"
)

// helperCrash runs the command line args[1:] and kills itself with
// SIGKILL when a site remark contains args[0].
func helperCrash(args []string) int {
	federateLogHook = func(msg string) {
		if strings.Contains(msg, args[0]) {
			proctest.KillSelf()
		}
	}
	return run(args[1:], &env{stdout: os.Stdout, stderr: os.Stderr})
}

// lockedBuffer is a bytes.Buffer safe for a process's writes and the
// test's reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// proc is a dadil process started by a test.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr *lockedBuffer
	done           chan error
}

// startDadil starts the test binary as helper with args, killed at the
// end of the test if still running.
func startDadil(t *testing.T, helper string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: proctest.Command(t, helper, args...), stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan error, 1)}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// wait waits for the process to end, at most d.
func (p *proc) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(d):
		t.Fatalf("%v still running after %v; stderr:\n%s", p.cmd.Args, d, p.stderr)
	}
	return nil
}

// waitFor waits, at most 20 s, for re to match the process's stderr and
// returns the first submatch.
func (p *proc) waitFor(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(p.stderr.String()); m != nil {
			return m[1]
		}
	}
	t.Fatalf("no %v in the stderr of %v:\n%s", re, p.cmd.Args, p.stderr)
	return ""
}

var listening = regexp.MustCompile(`listening on ((?:nats|tls)://\S+)`)

// startServe starts dadil federate serve for 4 sites on a free port with
// the token "tok" and returns it and the server's URL.
func startServe(t *testing.T, extra ...string) (*proc, string) {
	t.Helper()
	args := []string{"", "federate", "serve", "--sites", "4", "--listen", "127.0.0.1:0", "--token", "tok",
		"--local-epochs", "5", "--samples", "90", "--batch", "30", "--join-timeout", "30s", "--max-payload", "4096"}
	s := startDadil(t, "dadil", append(args, extra...)...)
	return s, s.waitFor(t, listening)
}

// joinArgs returns the arguments of dadil federate join for a file.
func joinArgs(url, role, path string, extra ...string) []string {
	return append([]string{"", "federate", "join", "--" + role, path, "--nats", url, "--token", "tok", "--workers", "1", "--idle-timeout", "60s"}, extra...)
}

// finishFederation waits for serve and the sites to end successfully and returns
// serve's report.
func finishFederation(t *testing.T, serve *proc, sites []*proc) serveReport {
	t.Helper()
	if err := serve.wait(t, 60*time.Second); err != nil {
		t.Fatalf("serve: %v\n%s", err, serve.stderr)
	}
	for _, s := range sites {
		if err := s.wait(t, 20*time.Second); err != nil {
			t.Fatalf("%v: %v\n%s", s.cmd.Args, err, s.stderr)
		}
	}
	return serveResult(t, serve)
}

// serveResult decodes the report serve printed.
func serveResult(t *testing.T, p *proc) serveReport {
	t.Helper()
	var r serveReport
	if err := json.Unmarshal(bytes.TrimSpace([]byte(p.stdout.String())), &r); err != nil {
		t.Fatalf("serve's report %q: %v; stderr:\n%s", p.stdout, err, p.stderr)
	}
	return r
}

// TestFederateProcesses runs a coordinator and four sites as processes on
// 127.0.0.1, with a fifth process presenting a wrong token and the test
// sending hostile frames to the coordinator throughout.
func TestFederateProcesses(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	serve, url := startServe(t, "--rounds", "12", "--round-timeout", "20s")
	intruder := startDadil(t, "dadil", joinArgs(url, "source", src[0], "--token", "wrong")...)
	stop := make(chan struct{})
	defer close(stop)
	go hostile(t, url, stop)
	var sites []*proc
	for _, s := range src {
		sites = append(sites, startDadil(t, "dadil", joinArgs(url, "source", s)...))
	}
	pred := filepath.Join(dir, "pred.csv")
	sites = append(sites, startDadil(t, "dadil", joinArgs(url, "target", tgt, "--out", pred)...))
	r := finishFederation(t, serve, sites)
	if err := intruder.wait(t, 20*time.Second); err == nil || !strings.Contains(intruder.stderr.String(), "Authorization Violation") {
		t.Errorf("a wrong token: %v, %s", err, intruder.stderr)
	}
	if len(r.Rounds) != 12 || r.Acknowledged != 4 || strings.Join(r.Sites, " ") != "s1 s2 s3 t" {
		t.Errorf("%d rounds, %d acknowledgements, sites %v", len(r.Rounds), r.Acknowledged, r.Sites)
	}
	for _, rr := range r.Rounds {
		if len(rr.Answered) != 4 || rr.BytesOut < 4*90*5*8 {
			t.Errorf("round %d: answered %v, %d bytes", rr.Round, rr.Answered, rr.BytesOut)
		}
	}
	if !strings.Contains(serve.stderr.String(), "rejected a frame") || !strings.Contains(serve.stderr.String(), "round 12/12: 4 of 4 sites answered") {
		t.Errorf("serve's stderr:\n%s", serve.stderr)
	}
	var rep joinReport
	if err := json.Unmarshal(bytes.TrimSpace([]byte(sites[3].stdout.String())), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.AccuracyR == nil || *rep.AccuracyR < 90 || len(rep.Trained) != 12 || strings.Join(intStrings(rep.Labels), ",") != "10,20,30" {
		t.Errorf("target report %+v", rep)
	}
	if b, err := os.ReadFile(pred); err != nil || !strings.HasPrefix(string(b), "dadil_r,dadil_e\n") || strings.Count(string(b), "\n") != 301 {
		t.Errorf("predictions: %v %.40q", err, b)
	}
}

// TestFederateSiteKilled kills a source site on its way through round 2;
// the round completes with the others after the timeout, the site rejoins
// and the federation finishes with every site.
func TestFederateSiteKilled(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	serve, url := startServe(t, "--rounds", "8", "--round-timeout", "4s")
	crash := startDadil(t, "dadil-crash", append([]string{"round 2: training"}, joinArgs(url, "source", src[0])[1:]...)...)
	var sites []*proc
	for _, s := range src[1:] {
		sites = append(sites, startDadil(t, "dadil", joinArgs(url, "source", s)...))
	}
	sites = append(sites, startDadil(t, "dadil", joinArgs(url, "target", tgt)...))
	if err := crash.wait(t, 30*time.Second); !proctest.Killed(err) {
		t.Fatalf("the site was not killed: %v\n%s", err, crash.stderr)
	}
	sites = append(sites, startDadil(t, "dadil", joinArgs(url, "source", src[0])...))
	r := finishFederation(t, serve, sites)
	if got := r.Rounds[1].Answered; len(got) != 3 || got[0] != 1 {
		t.Errorf("round 2 answered by %v, want the 3 sites alive", got)
	}
	if got := r.Rounds[7].Answered; len(got) != 4 || r.Acknowledged != 4 {
		t.Errorf("round 8 answered by %v, %d acknowledgements; want the rejoined site too", got, r.Acknowledged)
	}
	if !strings.Contains(serve.stderr.String(), "site s1 missed the round") {
		t.Errorf("serve's stderr:\n%s", serve.stderr)
	}
	var rep joinReport
	if err := json.Unmarshal(bytes.TrimSpace([]byte(sites[2].stdout.String())), &rep); err != nil || rep.AccuracyR == nil {
		t.Fatalf("target report %q: %v", sites[2].stdout, err)
	}
	t.Logf("target accuracy after a crash: DaDiL-R %.2f%%, DaDiL-E %.2f%%", *rep.AccuracyR, *rep.AccuracyE)
}

// TestFederateCoordinatorKilled kills the coordinator (and the embedded
// NATS server in its process) with SIGKILL once the target trains in
// round 4, and starts it again on the same port and state: it resumes
// after the last round it completed (3 or later), the sites reconnect and
// send the updates of the round under way (again), and the federation
// finishes with every site, every round trained once.
func TestFederateCoordinatorKilled(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	args := []string{"--rounds", "12", "--round-timeout", "10s", "--state", filepath.Join(dir, "state")}
	serve, url := startServe(t, args...)
	var sites []*proc
	for _, s := range src {
		sites = append(sites, startDadil(t, "dadil", joinArgs(url, "source", s)...))
	}
	sites = append(sites, startDadil(t, "dadil", joinArgs(url, "target", tgt)...))
	sites[3].waitFor(t, regexp.MustCompile(`(round 4): training`))
	serve.cmd.Process.Kill()
	if err := serve.wait(t, 10*time.Second); !proctest.Killed(err) {
		t.Fatalf("the coordinator was not killed: %v", err)
	}
	serve, _ = startServe(t, append(args, "--listen", strings.TrimPrefix(url, "nats://"))...)
	r := finishFederation(t, serve, sites)
	if r.FirstRound < 4 || r.FirstRound > 12 || len(r.Rounds) != 13-r.FirstRound || r.Acknowledged != 4 {
		t.Fatalf("resumed at round %d, ran %d rounds, %d acknowledgements\n%s", r.FirstRound, len(r.Rounds), r.Acknowledged, serve.stderr)
	}
	for _, rr := range r.Rounds {
		if len(rr.Answered) != 4 {
			t.Errorf("round %d answered by %v", rr.Round, rr.Answered)
		}
	}
	if !strings.Contains(serve.stderr.String(), "resumed the federation of 4 sites after round "+strconv.Itoa(r.FirstRound-1)) {
		t.Errorf("serve's stderr:\n%s", serve.stderr)
	}
	var rep joinReport
	if err := json.Unmarshal(bytes.TrimSpace([]byte(sites[3].stdout.String())), &rep); err != nil || rep.AccuracyR == nil {
		t.Fatalf("target report %q: %v", sites[3].stdout, err)
	}
	if strings.Join(intStrings(rep.Trained), ",") != "1,2,3,4,5,6,7,8,9,10,11,12" || *rep.AccuracyR < 90 {
		t.Errorf("the target trained in rounds %v, accuracy %.2f%%", rep.Trained, *rep.AccuracyR)
	}
	t.Logf("resumed at round %d; target accuracy after a coordinator crash: DaDiL-R %.2f%%, DaDiL-E %.2f%%", r.FirstRound, *rep.AccuracyR, *rep.AccuracyE)
}

// hostile sends malformed frames to the coordinator's upload subject every
// 20 ms until stop is closed.
func hostile(t *testing.T, url string, stop chan struct{}) {
	nc, err := federate.Connect(url, "tok", "hostile")
	if err != nil {
		t.Error(err)
		return
	}
	defer nc.Close()
	huge := make([]byte, federate.HeaderSize)
	copy(huge, federate.Magic+"\x01\x00\x02\x00")
	for i := 16; i < 32; i++ {
		huge[i] = 0xff
	}
	for {
		for _, b := range [][]byte{[]byte(strings.Repeat("garbage!", 20)), huge, huge[:20]} {
			nc.Publish(federate.DefaultSubject+".up.s1", b)
		}
		select {
		case <-stop:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func intStrings(v []int) []string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return s
}

func TestFederateUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"federate", "serve", "--sites", "2", "--nats", "nats://127.0.0.1:1", "--state", "x"}, "--state-bucket"},
		{[]string{"federate", "serve", "--sites", "2", "--scale", "standard"}, `--scale "standard": want minmax or none`},
		{[]string{"federate", "serve", "--sites", "2", "--start", "rows"}, `unknown start "rows"`},
		{[]string{"federate", "demo", "--start", "rows"}, `unknown start "rows"`},
		{[]string{"federate", "serve", "--sites", "2", "--aggregation", "median"}, `unknown aggregation "median"`},
		{[]string{"federate", "serve", "--sites", "2", "--server-optimizer", "yogi"}, `unknown server optimiser "yogi"`},
		{[]string{"federate", "demo", "--server-lr", "-1"}, "--server-lr -1: want a positive number"},
		{[]string{"federate", "demo", "--server-beta1", "1"}, "--server-beta1 1: want 0 ≤ β₁ < 1"},
		{[]string{"federate", "demo", "--source", "a.csv"}, "--source and --target go together"},
		{[]string{"federate", "demo", "--folds", "1"}, "--folds goes with --bench"},
		{[]string{"federate", "demo", "--json", "x.json"}, "--json goes with --bench"},
		{[]string{"federate", "demo", "--bench", "cwru", "--data", "d"}, `--bench: want office-caltech10, not "cwru"`},
		{[]string{"federate", "demo", "--bench", "office-caltech10"}, "--data is required with --bench"},
		{[]string{"federate", "demo", "--bench", "office-caltech10", "--data", "d", "--source", "a.csv"}, "--source has no meaning with --bench"},
		{[]string{"federate", "demo", "--bench", "office-caltech10", "--data", "d", "--targets", "W,X"}, `--targets: "X" is not one of W, A, D, C`},
		{[]string{"federate", "demo", "--bench", "office-caltech10", "--data", "d", "--folds", "1,6"}, `--folds: "6" is not a fold (1 to 5)`},
		{[]string{"federate", "serve", "--sites", "2", "--site-keys", "k", "--token", "t", "--listen", "127.0.0.1:0"}, "--site-keys and --token: give one credential"},
		{[]string{"federate", "serve", "--sites", "2", "--site-keys", "k", "--nats", "nats://127.0.0.1:1"}, "--site-keys configures the embedded server"},
		{[]string{"federate", "serve", "--sites", "2", "--nkey", "k", "--listen", "127.0.0.1:0"}, "--nkey and --creds connect to an existing server"},
		{[]string{"federate", "serve", "--sites", "2", "--tls-cert", "c", "--listen", "127.0.0.1:0"}, "--tls-cert and --tls-key go together"},
		{[]string{"federate", "join", "--source", "x.csv", "--token", "t", "--nkey", "k"}, "give one credential"},
		{[]string{"federate", "join", "--source", "x.csv", "--name", "a.b"}, `--name "a.b": want`},
		{[]string{"federate", "join", "--source", "x.csv", "--tls-key", "k"}, "--tls-cert and --tls-key go together"},
		{[]string{"federate", "keys"}, "name at least one site"},
		{[]string{"federate", "keys", "a", "a"}, `site name "a": want distinct names`},
	} {
		code, _, stderr := runCLI(c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// TestRoundFlagsDefaults: the coordinator's defaults (FedAvg over the
// mean, sites keeping their Adam state and weighing their moves by K·α,
// logits over the sources), the shared second moments with unweighed moves
// and logits over all sites unless given, and the paper's setting with
// --aggregation random unless its flags are given.
func TestRoundFlagsDefaults(t *testing.T) {
	type want struct {
		agg                       federate.Aggregation
		opt                       federate.ServerOptimizer
		keep, weigh, share, logit bool
	}
	for _, c := range []struct {
		args []string
		want want
		err  string
	}{
		{nil, want{federate.Average, federate.ServerSGD, true, true, false, true}, ""},
		{[]string{"--share-moments"}, want{federate.Average, federate.ServerSGD, true, false, true, false}, ""},
		{[]string{"--share-moments", "--source-logits"}, want{federate.Average, federate.ServerSGD, true, false, true, true}, ""},
		{[]string{"--keep-local-state=false"}, want{federate.Average, federate.ServerSGD, false, true, false, true}, ""},
		{[]string{"--aggregation", "wbary", "--server-optimizer", "adam", "--keep-local-state=false", "--weigh-moves=false"}, want{federate.WBary, federate.ServerAdam, false, false, false, true}, ""},
		{[]string{"--aggregation", "random"}, want{federate.Random, federate.ServerSGD, false, false, false, true}, ""},
		{[]string{"--aggregation", "random", "--server-optimizer", "momentum", "--keep-local-state", "--weigh-moves"}, want{federate.Random, federate.ServerMomentum, true, true, false, true}, ""},
		{[]string{"--share-moments", "--weigh-moves"}, want{}, "--share-moments needs --keep-local-state and --weigh-moves=false"},
		{[]string{"--share-moments", "--keep-local-state=false"}, want{}, "--share-moments needs"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		var rf roundFlags
		rf.register(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		cfg, err := rf.config(fs)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		got := want{cfg.Aggregation, cfg.Server.Optimizer, cfg.KeepLocalState, cfg.WeighMoves, cfg.ShareMoments, cfg.SourceLogits}
		if err != nil || got != c.want {
			t.Errorf("%v: %+v, %v; want %+v", c.args, got, err, c.want)
		}
	}
}

// TestFederateDemoBench runs dadil federate demo --bench on one split of a
// generated Caltech-Office-like benchmark: the target's training folds as
// the target site, scored on its test fold beside the centralised fit.
func TestFederateDemoBench(t *testing.T) {
	dir := officeFixture(t, 60)
	js := filepath.Join(t.TempDir(), "fed.json")
	code, stdout, stderr := runCLI("federate", "demo", "--quiet", "--workers", "1", "--rounds", "3", "--local-epochs", "2",
		"--bench", "office-caltech10", "--data", dir, "--targets", "d", "--folds", "2", "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	t.Log(stdout)
	for _, want := range []string{"federated DaDiL: 4 sites, 3 rounds of 2 local epochs", "label logits the sources' mean", "mean ± std over folds 2; centralised: 6 epochs",
		"| Method | D | Avg |", "| federated DaDiL-R |", "| federated DaDiL-E |", "| centralised DaDiL-R |", "| centralised DaDiL-E |",
		"| centralised DaDiL-R, federation's start |", "| centralised DaDiL-E, federation's start |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	// One line for the split: the test fold holds 12 of D's 60 rows, so
	// every accuracy is a multiple of 1/12.
	var fr, fe, cr, ce, fs, cs, sr, se float64
	i := strings.Index(stdout, "D fold 2: ")
	if i < 0 {
		t.Fatal("no line for D fold 2")
	}
	if _, err := fmt.Sscanf(stdout[i:], "D fold 2: federated R %f E %f (%f s), centralised R %f E %f (%f s), from the federation's start R %f E %f", &fr, &fe, &fs, &cr, &ce, &cs, &sr, &se); err != nil {
		t.Fatalf("the split's line: %v", err)
	}
	for _, a := range []float64{fr, fe, cr, ce, sr, se} {
		if k := a * 12 / 100; math.Abs(k-math.Round(k)) > 0.01 || a < 80 {
			t.Errorf("accuracies %v %v %v %v %v %v: want multiples of 1/12 of the test fold, above 80 %% on separated classes", fr, fe, cr, ce, sr, se)
			break
		}
	}
	if row := fmt.Sprintf("| federated DaDiL-R | %.2f ± 0.00 | %.2f |", fr, fr); !strings.Contains(stdout, row) {
		t.Errorf("stdout lacks %q", row)
	}
	// --json keeps the same accuracies, the settings and the bytes.
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Federation struct {
			Rounds       int  `json:"rounds"`
			LocalEpochs  int  `json:"local_epochs"`
			SourceLogits bool `json:"source_logits"`
			ShareMoments bool `json:"share_moments"`
		} `json:"federation"`
		Bytes   map[string]int64 `json:"bytes_per_round"`
		Results []struct {
			Method   string  `json:"method"`
			Target   string  `json:"target"`
			Fold     int     `json:"fold"`
			Accuracy float64 `json:"accuracy"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Federation.Rounds != 3 || rep.Federation.LocalEpochs != 2 || !rep.Federation.SourceLogits || rep.Federation.ShareMoments || rep.Bytes["to_sites"] <= 0 || rep.Bytes["from_sites"] <= 0 || len(rep.Results) != 6 {
		t.Fatalf("JSON %s", b)
	}
	for i, want := range []float64{fr, fe, cr, ce, sr, se} {
		if r := rep.Results[i]; r.Method != federatedMethods[i] || r.Target != "D" || r.Fold != 2 || math.Abs(r.Accuracy-want) > 0.005 {
			t.Errorf("JSON result %d: %+v, want %s %.2f", i, r, federatedMethods[i], want)
		}
	}
}
