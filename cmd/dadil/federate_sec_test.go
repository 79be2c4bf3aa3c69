//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dadil/dadil/internal/proctest"
	"github.com/dadil/dadil/internal/testpki"
)

// serveArgs are the arguments of a short dadil federate serve for 4 sites
// (no credential).
var serveArgs = []string{"federate", "serve", "--sites", "4", "--local-epochs", "5", "--samples", "90", "--batch", "30",
	"--join-timeout", "30s", "--max-payload", "4096", "--rounds", "4", "--round-timeout", "20s"}

// TestFederateNKeysTLS runs a federation over TLS with client
// certificates where every site has its own NKey (dadil federate keys),
// beside three intruders: a site's name with a key the coordinator does
// not know, a site's key used to join as another site, and a site's key
// with a certificate of another CA. Each is refused.
func TestFederateNKeysTLS(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	keys, stranger := filepath.Join(dir, "keys"), filepath.Join(dir, "stranger")
	for _, d := range []string{keys, stranger} {
		if code, _, stderr := runCLI("federate", "keys", "--dir", d, "s1", "s2", "s3", "t"); code != 0 {
			t.Fatal(stderr)
		}
	}
	pki := testpki.Write(t, dir)
	serve := startDadil(t, "dadil", append(append([]string{""}, serveArgs...), "--listen", "127.0.0.1:0", "--site-keys", filepath.Join(keys, "sites.keys"),
		"--tls-cert", pki.ServerCert, "--tls-key", pki.ServerKey, "--tls-ca", pki.CA)...)
	url := serve.waitFor(t, listening)
	join := func(role, path, seeds, cert, key string, extra ...string) *proc {
		name := strings.TrimSuffix(filepath.Base(path), ".csv")
		args := []string{"", "federate", "join", "--" + role, path, "--nats", url, "--nkey", filepath.Join(seeds, name+".nk"),
			"--tls-ca", pki.CA, "--tls-cert", cert, "--tls-key", key, "--workers", "1", "--idle-timeout", "60s"}
		return startDadil(t, "dadil", append(args, extra...)...)
	}
	intruders := map[string]*proc{
		"Authorization Violation": join("source", src[0], stranger, pki.ClientCert, pki.ClientKey),
		"permissions violation":   join("source", src[0], keys, pki.ClientCert, pki.ClientKey, "--name", "s2"),
		"tls":                     join("source", src[0], keys, pki.RogueCert, pki.RogueKey),
	}
	// The intruders are refused while the server runs.
	for want, p := range intruders {
		if err := p.wait(t, 20*time.Second); err == nil || !strings.Contains(p.stderr.String(), want) {
			t.Errorf("%v: %v, %s; want a refusal with %q", p.cmd.Args, err, p.stderr, want)
		}
	}
	var sites []*proc
	for _, s := range src {
		sites = append(sites, join("source", s, keys, pki.ClientCert, pki.ClientKey))
	}
	sites = append(sites, join("target", tgt, keys, pki.ClientCert, pki.ClientKey))
	r := finishFederation(t, serve, sites)
	if len(r.Rounds) != 4 || r.Acknowledged != 4 || strings.Join(r.Sites, " ") != "s1 s2 s3 t" {
		t.Errorf("%d rounds, %d acknowledgements, sites %v", len(r.Rounds), r.Acknowledged, r.Sites)
	}
	for _, rr := range r.Rounds {
		if len(rr.Answered) != 4 {
			t.Errorf("round %d answered by %v", rr.Round, rr.Answered)
		}
	}
	if !strings.Contains(serve.stderr.String(), "(the NKeys of 4 sites, TLS)") {
		t.Errorf("serve's stderr:\n%s", serve.stderr)
	}
	rep := targetReport(t, sites[3])
	t.Logf("over TLS with NKeys: DaDiL-R %.2f%%, DaDiL-E %.2f%%", *rep.AccuracyR, *rep.AccuracyE)
}

// TestFederateCoordinatorKilledBeforeStart starts the sites before any
// server (they retry their first connection), then a coordinator that is
// killed with SIGKILL, with its embedded server, as the first site joins,
// before it has saved anything. The coordinator started again on the same
// port announces itself; the sites, which kept reconnecting, join it and
// the federation completes from round 1.
func TestFederateCoordinatorKilledBeforeStart(t *testing.T) {
	dir := t.TempDir()
	src, tgt := synthFiles(t, dir, true)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	url := "nats://" + addr
	var sites []*proc
	for _, s := range src {
		sites = append(sites, startDadil(t, "dadil", joinArgs(url, "source", s, "--connect-timeout", "30s")...))
	}
	sites = append(sites, startDadil(t, "dadil", joinArgs(url, "target", tgt, "--connect-timeout", "30s")...))
	time.Sleep(300 * time.Millisecond)
	state := filepath.Join(dir, "state")
	crash := startDadil(t, "dadil-crash", append(append([]string{"joined"}, serveArgs...), "--listen", addr, "--token", "tok", "--state", state)...)
	if err := crash.wait(t, 30*time.Second); !proctest.Killed(err) {
		t.Fatalf("the coordinator was not killed: %v\n%s", err, crash.stderr)
	}
	serve, _ := startServe(t, "--listen", addr, "--state", state, "--rounds", "4", "--join-timeout", "8s")
	defer func() {
		if t.Failed() {
			for _, s := range sites {
				t.Log(s.stderr)
			}
		}
	}()
	r := finishFederation(t, serve, sites)
	if r.FirstRound != 1 || len(r.Rounds) != 4 || r.Acknowledged != 4 {
		t.Fatalf("first round %d, %d rounds, %d acknowledgements\n%s", r.FirstRound, len(r.Rounds), r.Acknowledged, serve.stderr)
	}
	for _, rr := range r.Rounds {
		if len(rr.Answered) != 4 {
			t.Errorf("round %d answered by %v", rr.Round, rr.Answered)
		}
	}
	rep := targetReport(t, sites[3])
	if fmt.Sprint(rep.Trained) != "[1 2 3 4]" || *rep.AccuracyR < 90 {
		t.Errorf("the target trained in rounds %v, accuracy %.2f%%", rep.Trained, *rep.AccuracyR)
	}
	t.Logf("after a coordinator killed in the join: DaDiL-R %.2f%%, DaDiL-E %.2f%%", *rep.AccuracyR, *rep.AccuracyE)
}

// targetReport decodes the report a target site printed.
func targetReport(t *testing.T, p *proc) joinReport {
	t.Helper()
	var rep joinReport
	if err := json.Unmarshal(bytes.TrimSpace([]byte(p.stdout.String())), &rep); err != nil || rep.AccuracyR == nil {
		t.Fatalf("target report %q: %v", p.stdout, err)
	}
	return rep
}
