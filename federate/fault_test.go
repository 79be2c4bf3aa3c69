package federate

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/synth"
)

// logRecorder collects a coordinator's remarks.
type logRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (l *logRecorder) log(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.TrimSpace(sprintf(format, a...)))
}

func (l *logRecorder) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, x := range l.lines {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

// silentSite joins the federation as a source named name and then never
// answers; it calls onWelcome, if not nil, with its welcome, and onFrame,
// if not nil, on every frame it receives.
func silentSite(t *testing.T, url, subject, name string, onWelcome func(w welcome), onFrame func(b []byte)) {
	t.Helper()
	nc, err := Connect(url, "secret", name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	inbox := inboxPrefix(subject, name) + "silent"
	if _, err := nc.Subscribe(inbox, func(m *natsMsg) {
		if onFrame != nil {
			onFrame(m.Data)
		}
	}); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(hello{Version: Version, Name: name, Role: RoleSource, Features: 2, Labels: []int{0, 1, 2}, Inbox: inbox})
	go func() {
		m, err := request(context.Background(), nc, joinSubject(subject, name), b)
		var w welcome
		if err == nil && decodeControl(m.Data, &w) == nil && onWelcome != nil {
			onWelcome(w)
		}
	}()
}

func TestSiteMissesRounds(t *testing.T) {
	url := startServer(t, "secret")
	p := synth.Generate(synth.Default(), 1)
	cfg := testConfig(2)
	cfg.RoundTimeout = 1500 * time.Millisecond
	rec := &logRecorder{}
	cfg.Log = rec.log
	// A fifth site that joins and never answers: every round completes
	// with the other four after the timeout.
	silentSite(t, url, cfg.Subject, "a-silent", nil, nil)
	// A hello in another site's name is refused.
	nc, err := Connect(url, "secret", "liar")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	refused := make(chan string, 1)
	go func() {
		b, _ := json.Marshal(hello{Version: Version, Name: "s9", Role: RoleSource, Features: 2, Labels: []int{0, 1}, Inbox: inboxPrefix(cfg.Subject, "s9") + "x"})
		var w welcome
		if m, err := request(context.Background(), nc, joinSubject(cfg.Subject, "a-liar"), b); err == nil && decodeControl(m.Data, &w) == nil {
			refused <- w.Error
		}
		close(refused)
	}()
	// RunProblem expects the problem's domains; the silent site is one more.
	cfg.Sites = 5
	res, sites, err := runWithExtra(t, url, p, cfg, 1)
	if why := <-refused; !strings.Contains(why, "a hello on test.fed.join.a-liar names site s9") {
		t.Errorf("a hello in another's name: %q", why)
	}
	if err != nil {
		t.Fatal(err, rec.lines)
	}
	for _, st := range res.Rounds {
		if len(st.Chosen) != 5 || len(st.Answered) != 4 || st.Answered[0] != 1 {
			t.Errorf("round %d: chosen %v, answered %v", st.Round, st.Chosen, st.Answered)
		}
	}
	if !rec.has("site a-silent missed the round") || sites[3].Model == nil {
		t.Errorf("no remark on the silent site, or no model: %v", rec.lines)
	}
}

// hostileSetup starts a server for a federation of three rounds of the
// generated problem with short round timeouts, its remarks recorded, and
// connects a hostile client to it.
func hostileSetup(t *testing.T) (url string, p *dataset.Problem, cfg Config, rec *logRecorder, nc *nats.Conn) {
	t.Helper()
	url = startServer(t, "secret")
	p = synth.Generate(synth.Default(), 1)
	cfg = testConfig(3)
	cfg.RoundTimeout = 2 * time.Second
	rec = &logRecorder{}
	cfg.Log = rec.log
	nc, err := Connect(url, "secret", "hostile")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return url, p, cfg, rec, nc
}

func TestHostileFrames(t *testing.T) {
	url, p, cfg, rec, nc := hostileSetup(t)
	// The hostile site sends a summary with a negative deviation, then
	// answers every round in its name with a frame claiming a huge shape,
	// a truncated frame, garbage, NaN atoms of the right shape, and a
	// frame of an unsupported version.
	cfg.Scaling = dataset.ScaleMinMax
	silentSite(t, url, cfg.Subject, "a-hostile", func(w welcome) {
		sh := SummaryShape(w.Shape.D, w.Shape.C)
		X := mat.NewDense(6, w.Shape.D, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
		data := summarize(X, []int{0, 0, 0, 0, 0, 0}, w.Shape.C, w.Ranges, w.Classes)
		data[3*w.Shape.D] = -1 // class 0's deviation of feature 1
		frames, _ := Encode(&Message{Kind: KindSummary, Client: uint32(w.ID), Shape: sh, Data: data}, 1<<20)
		nc.Publish(upSubject(cfg.Subject, "a-hostile"), frames[0])
	}, func(b []byte) {
		h, _, err := ParseFrame(b)
		if err != nil || h.Kind != KindRound {
			return
		}
		up := upSubject(cfg.Subject, "a-hostile")
		big := make([]byte, HeaderSize+8)
		putHeader(big, &Header{Kind: KindUpdate, Round: h.Round, Client: h.Client, Shape: Shape{1 << 30, 1 << 30, 1, 1}, Chunks: 1})
		nc.Publish(up, big)
		nc.Publish(up, b[:HeaderSize-3])
		nc.Publish(up, []byte(strings.Repeat("garbage!", 10)))
		v, _ := h.Shape.Values()
		m := &Message{Kind: KindUpdate, Round: h.Round, Client: h.Client, Shape: h.Shape, Data: make([]float64, v)}
		m.Data[7] = math.NaN()
		frames, _ := Encode(m, 1<<20)
		for _, f := range frames {
			nc.Publish(up, f)
		}
		// A well-formed update in another site's name, on its own subject.
		m.Data[7], m.Client = 0, h.Client+1
		frames, _ = Encode(m, 1<<20)
		nc.Publish(up, frames[0])
		ver := append([]byte(nil), frames[0]...)
		binary.LittleEndian.PutUint16(ver[4:], 9)
		nc.Publish(up, ver)
		nc.Flush()
	})
	cfg.Sites = 5
	runBesideHostile(t, url, p, cfg, rec)
	for _, want := range []string{"shorter than the 64-byte header", "bad magic", "more than", "unsupported message version 9", "site a-hostile: rejected its update: federate: chunk 0: value 7 is NaN",
		"site a-hostile: rejected its summary: federate: class 0: feature 1 has deviation -1", "summaries from 4 of 5 sites",
		"rejected a frame on test.fed.up.a-hostile claiming site id 1"} {
		if !rec.has(want) {
			t.Errorf("no remark %q in %q", want, rec.lines)
		}
	}
}

// runBesideHostile runs the federation cfg of p with a hostile site (id 0)
// beside its domains and checks that every round aggregated the four
// others and that the target trained its model.
func runBesideHostile(t *testing.T, url string, p *dataset.Problem, cfg Config, rec *logRecorder) {
	t.Helper()
	res, sites, err := runWithExtra(t, url, p, cfg, 1)
	if err != nil {
		t.Fatal(err, rec.lines)
	}
	for _, st := range res.Rounds {
		if len(st.Answered) != 4 || st.Answered[0] != 1 {
			t.Errorf("round %d: answered %v", st.Round, st.Answered)
		}
	}
	if sites[3].Model == nil {
		t.Error("no model")
	}
}

func TestWrongToken(t *testing.T) {
	url := startServer(t, "secret")
	for _, tok := range []string{"", "wrong"} {
		if nc, err := Connect(url, tok, "intruder"); err == nil {
			nc.Close()
			t.Errorf("token %q: connected", tok)
		} else if !strings.Contains(err.Error(), "Authorization Violation") {
			t.Errorf("token %q: %v", tok, err)
		}
	}
}

func TestFraction(t *testing.T) {
	url := startServer(t, "secret")
	p := synth.Generate(synth.Default(), 1)
	var atoms [2]*Result
	for i := range atoms {
		cfg := testConfig(6)
		cfg.Fraction, cfg.Aggregation = 0.5, Random
		res, _, err := RunProblem(context.Background(), url, "secret", p, cfg, SiteConfig{Workers: 1 + 3*i})
		if err != nil {
			t.Fatal(err)
		}
		atoms[i] = res
	}
	seen := map[int]bool{}
	for _, st := range atoms[0].Rounds {
		if len(st.Chosen) != 2 || len(st.Answered) != 2 {
			t.Errorf("round %d: chosen %v, answered %v", st.Round, st.Chosen, st.Answered)
		}
		for _, id := range st.Chosen {
			seen[id] = true
		}
	}
	if len(seen) < 3 {
		t.Errorf("6 rounds chose only the sites %v", seen)
	}
	if !atomsEqual(atoms[0].Atoms, atoms[1].Atoms) {
		t.Error("the atoms depend on the sites' goroutines")
	}
}
