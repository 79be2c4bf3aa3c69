package federate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/internal/testpki"
	"github.com/dadil/dadil/synth"
)

// keyring gives every named site an NKey and returns their public keys
// and seeds, and the coordinator's seed and public key.
type keyring struct {
	sites       []SiteKey
	seeds       map[string][]byte
	coord       []byte
	coordPublic string
}

func newKeyring(t *testing.T, names ...string) *keyring {
	t.Helper()
	k := &keyring{seeds: map[string][]byte{}}
	var err error
	if k.coord, k.coordPublic, err = NewKey(); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		seed, pub, err := NewKey()
		if err != nil {
			t.Fatal(err)
		}
		k.sites, k.seeds[n] = append(k.sites, SiteKey{Name: n, PublicKey: pub}), seed
	}
	return k
}

// startKeyServer starts an embedded server admitting the keyring's sites
// under subject, with TLS files tls.
func startKeyServer(t *testing.T, k *keyring, subject string, tls TLSFiles) string {
	t.Helper()
	s, err := StartServer(ServerConfig{Sites: k.sites, Coordinator: k.coordPublic, Subject: subject, TLS: tls})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

// refusal waits, at most 5 s, for the server to refuse something on nc.
func refusal(t *testing.T, nc *nats.Conn) error {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if err := nc.LastError(); err != nil {
			return err
		}
	}
	return nil
}

func TestSitePermissions(t *testing.T) {
	const subj = "perm.fed"
	k := newKeyring(t, "s1", "s2")
	url := startKeyServer(t, k, subj, TLSFiles{})
	dial := func(o ConnOptions) (*nats.Conn, error) {
		o.Subject, o.Name = subj, "test"
		return Dial(url, o)
	}
	s1, err := dial(ConnOptions{NKeySeed: k.seeds["s1"], Site: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	// Its own subjects are allowed.
	if _, err := s1.SubscribeSync(inboxPrefix(subj, "s1") + "x"); err != nil {
		t.Fatal(err)
	}
	s1.Publish(upSubject(subj, "s1"), []byte("x"))
	s1.Flush()
	if err := s1.LastError(); err != nil {
		t.Fatalf("site s1 on its own subjects: %v", err)
	}
	for _, c := range []struct {
		what string
		do   func(nc *nats.Conn)
	}{
		{"publish as s2", func(nc *nats.Conn) { nc.Publish(upSubject(subj, "s2"), []byte("x")) }},
		{"join as s2", func(nc *nats.Conn) { nc.Publish(joinSubject(subj, "s2"), []byte("x")) }},
		{"read s2's atoms", func(nc *nats.Conn) { nc.SubscribeSync(inboxPrefix(subj, "s2") + ">") }},
		{"read the uploads", func(nc *nats.Conn) { nc.SubscribeSync(upSubject(subj, "*")) }},
		{"announce a coordinator", func(nc *nats.Conn) { nc.Publish(announceSubject(subj), []byte("{}")) }},
		{"use JetStream", func(nc *nats.Conn) { nc.Publish("$JS.API.INFO", nil) }},
	} {
		nc, err := dial(ConnOptions{NKeySeed: k.seeds["s1"], Site: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		c.do(nc)
		nc.Flush()
		if err := refusal(t, nc); !errors.Is(err, nats.ErrPermissionViolation) {
			t.Errorf("%s: %v, want a permissions violation", c.what, err)
		}
		nc.Close()
	}
	other, _, _ := NewKey()
	for name, o := range map[string]ConnOptions{"an unknown key": {NKeySeed: other}, "a token": {Token: "secret"}, "nothing": {}} {
		if nc, err := dial(o); err == nil {
			nc.Close()
			t.Errorf("%s: connected", name)
		} else if !strings.Contains(err.Error(), "Authorization Violation") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestNKeysAndTLS runs a federation over TLS (client certificates
// required) where every site has its own NKey, and an impostor holding
// one site's key tries to join as another.
func TestNKeysAndTLS(t *testing.T) {
	p := synth.Generate(synth.Default(), 1)
	var names []string
	for i, d := range p.Domains() {
		names = append(names, SiteName(d, i))
	}
	k := newKeyring(t, names...)
	pki := testpki.Write(t, t.TempDir())
	cfg := testConfig(3)
	url := startKeyServer(t, k, cfg.Subject, TLSFiles{CA: pki.CA, Cert: pki.ServerCert, Key: pki.ServerKey})
	client := TLSFiles{CA: pki.CA, Cert: pki.ClientCert, Key: pki.ClientKey}

	impostor, err := Dial(url, ConnOptions{NKeySeed: k.seeds[names[0]], TLS: client, Subject: cfg.Subject, Site: names[1]})
	if err != nil {
		t.Fatal(err)
	}
	defer impostor.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = Join(ctx, impostor, SiteConfig{Subject: cfg.Subject, Name: names[1], X: p.Sources[1].X, Labels: p.Sources[1].Y})
	if !errors.Is(err, nats.ErrPermissionViolation) {
		t.Errorf("an impostor joining as %s: %v, want a permissions violation", names[1], err)
	}
	for what, tls := range map[string]TLSFiles{"no TLS": {}, "no client certificate": {CA: pki.CA},
		"a certificate of another CA": {CA: pki.CA, Cert: pki.RogueCert, Key: pki.RogueKey}} {
		if nc, err := Dial(url, ConnOptions{NKeySeed: k.seeds[names[0]], TLS: tls}); err == nil {
			nc.Close()
			t.Errorf("%s: connected", what)
		}
	}

	conn := func(site string) ConnOptions {
		if site == "" {
			return ConnOptions{NKeySeed: k.coord, TLS: client}
		}
		return ConnOptions{NKeySeed: k.seeds[site], TLS: client}
	}
	res, sites, err := runProblemSites(ctx, url, conn, p, cfg, SiteConfig{Workers: 1}, len(names))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range res.Rounds {
		if len(st.Answered) != 4 {
			t.Errorf("round %d answered by %v", st.Round, st.Answered)
		}
	}
	if res.Acknowledged != 4 || sites[3].Model == nil {
		t.Errorf("%d acknowledgements, target model %v", res.Acknowledged, sites[3].Model != nil)
	}
}

func TestReadSiteKeys(t *testing.T) {
	_, a, _ := NewKey()
	_, b, _ := NewKey()
	dir := t.TempDir()
	for _, c := range []struct{ text, want string }{
		{"# sites\n\ns1 " + a + "\ns2 " + b + "\n", ""},
		{"s1\n", ":1: want a site's name and its public NKey, got 1 fields"},
		{"s1 " + a + "\ns2 SUABC\n", `:2: federate: site s2: "SUABC" is not a public user NKey`},
		{"s1 " + a + "\ns1 " + b + "\n", ":2: federate: site s1 comes twice"},
		{"s1 " + a + "\ns2 " + a + "\n", ":2: federate: site s2: its NKey is another site's"},
		{"a.b " + a + "\n", `site name "a.b"`},
		{"# nothing\n", "no site key"},
	} {
		path := filepath.Join(dir, "keys")
		if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
			t.Fatal(err)
		}
		keys, err := ReadSiteKeys(path)
		switch {
		case c.want == "" && (err != nil || len(keys) != 2 || keys[1] != SiteKey{"s2", b}):
			t.Errorf("%q: %v, %v", c.text, keys, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: %v, want an error with %q", c.text, err, c.want)
		}
	}
	if _, err := ReadSiteKeys(filepath.Join(dir, "none")); err == nil || !strings.Contains(err.Error(), "none") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestDialRetries starts the server after the client has begun to dial.
func TestDialRetries(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	if _, err := Dial(url, ConnOptions{Token: "secret"}); !errors.Is(err, nats.ErrNoServers) {
		t.Fatalf("no server, no retry: %v", err)
	}
	type dialed struct {
		nc  *nats.Conn
		err error
	}
	got := make(chan dialed, 1)
	go func() {
		nc, err := Dial(url, ConnOptions{Token: "secret", ConnectTimeout: 20 * time.Second})
		got <- dialed{nc, err}
	}()
	time.Sleep(600 * time.Millisecond)
	s, err := StartServer(ServerConfig{Token: "secret", Port: port})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	d := <-got
	if d.err != nil {
		t.Fatalf("dialled before the server started: %v", d.err)
	}
	d.nc.Close()
	start := time.Now()
	if _, err := Dial(url, ConnOptions{Token: "wrong", ConnectTimeout: 20 * time.Second}); err == nil || !strings.Contains(err.Error(), "Authorization Violation") || time.Since(start) > 10*time.Second {
		t.Errorf("a wrong token: %v after %v, want a refusal at once", err, time.Since(start))
	}
}

// TestCoordinatorRestartsBeforeStart stops a coordinator once it has the
// sites' summaries, before it has saved anything (it has sent the scaling
// and round 1's atoms, on which the sites train); a new coordinator on
// the same subject announces itself, the sites forget the first
// federation, join the new one from scratch and it completes.
func TestCoordinatorRestartsBeforeStart(t *testing.T) {
	url := startServer(t, "secret")
	p := synth.Generate(synth.Default(), 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := testConfig(4)
	cfg.Sites = 4
	rec := &logRecorder{}
	var wg sync.WaitGroup
	sites := make([]*SiteResult, 4)
	for i, d := range p.Domains() {
		sc := SiteConfig{Subject: cfg.Subject, Name: SiteName(d, i), X: d.X, Workers: 1, Log: rec.log}
		if i < len(p.Sources) {
			sc.Labels = d.Y
		} else {
			sc.Target = true
		}
		wg.Go(func() {
			nc, err := Dial(url, ConnOptions{Token: "secret", Subject: cfg.Subject, Site: sc.Name})
			if err != nil {
				t.Error(err)
				return
			}
			defer nc.Close()
			if sites[i], err = Join(ctx, nc, sc); err != nil {
				t.Error(err)
			}
		})
	}
	serve := func(ctx context.Context, cfg Config) (*Result, error) {
		nc, err := Connect(url, "secret", "coordinator")
		if err != nil {
			return nil, err
		}
		defer nc.Close()
		return Serve(ctx, nc, cfg)
	}
	first, stop := context.WithCancel(ctx)
	cfg1 := cfg
	cfg1.Log = func(format string, a ...any) {
		if strings.HasPrefix(format, "summaries from") {
			stop()
		}
	}
	if _, err := serve(first, cfg1); !errors.Is(err, context.Canceled) {
		t.Fatalf("the first coordinator: %v", err)
	}
	res, err := serve(ctx, cfg)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range res.Rounds {
		if len(st.Answered) != 4 {
			t.Errorf("round %d answered by %v", st.Round, st.Answered)
		}
	}
	if res.Acknowledged != 4 || !rec.has("a new coordinator") {
		t.Errorf("%d acknowledgements; the sites' remarks: %q", res.Acknowledged, rec.lines)
	}
	for _, s := range sites {
		if s == nil || fmt.Sprint(s.Trained) != "[1 2 3 4]" {
			t.Fatalf("a site's result: %+v", s)
		}
	}
	if sites[3].Model == nil {
		t.Error("no model")
	}
}

// TestSiteRejoinsOnNewInbox plays a coordinator that welcomes a site and
// then gives way to a new one: the site must join the new coordinator on
// a new inbox and stop listening on the old one, so that frames the gone
// coordinator sent last (its scaling, its round's atoms) cannot reach it
// in the new federation, where they would stand for that federation's.
func TestSiteRejoinsOnNewInbox(t *testing.T) {
	url := startServer(t, "secret")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const subj = "test.inbox"
	coord, err := Connect(url, "secret", "coordinator")
	if err != nil {
		t.Fatal(err)
	}
	defer coord.Close()
	hellos, err := coord.SubscribeSync(joinSubject(subj, "s1"))
	if err != nil {
		t.Fatal(err)
	}
	nc, err := Dial(url, ConnOptions{Token: "secret", Subject: subj, Site: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	done := make(chan error, 1)
	go func() {
		cfg := SiteConfig{Subject: subj, Name: "s1", X: mat.NewDense(2, 1, []float64{0, 1}), Labels: []int{0, 1}}
		_, err := Join(ctx, nc, cfg)
		done <- err
	}()
	var inboxes []string
	for _, instance := range []string{"first", "second"} {
		m, err := hellos.NextMsgWithContext(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var h hello
		if err := json.Unmarshal(m.Data, &h); err != nil {
			t.Fatal(err)
		}
		inboxes = append(inboxes, h.Inbox)
		if instance == "second" {
			break
		}
		w := welcome{Instance: instance, Rounds: 1, Labels: []int{0, 1}, Shape: Shape{K: 1, N: 2, D: 1, C: 2}, Settings: dictionary.Settings{Epochs: 1}}
		b, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Respond(b); err != nil {
			t.Fatal(err)
		}
		// The site answers on its inbox once it waits for the rounds.
		if _, err := request(ctx, coord, h.Inbox, nil); err != nil {
			t.Fatalf("the site does not answer on its inbox: %v", err)
		}
		b, err = json.Marshal(announce{Version: Version, Instance: "second"})
		if err != nil {
			t.Fatal(err)
		}
		if err := coord.Publish(announceSubject(subj), b); err != nil {
			t.Fatal(err)
		}
	}
	if inboxes[0] == inboxes[1] {
		t.Errorf("the site joined the new coordinator on its old inbox %s", inboxes[0])
	}
	if _, err := coord.Request(inboxes[0], nil, time.Second); !errors.Is(err, nats.ErrNoResponders) {
		t.Errorf("a request to the old inbox: %v, want no responders", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the site: %v, want its context's end", err)
	}
}
