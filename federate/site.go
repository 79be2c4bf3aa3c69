package federate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
	"gonum.org/v1/gonum/mat"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
)

// SiteConfig configures a site (Join).
type SiteConfig struct {
	// Subject is the prefix of the federation's subjects (default
	// DefaultSubject).
	Subject string
	// Name identifies the site to the coordinator: a site that rejoins
	// under its name takes its place again.
	Name string
	// Target marks the target site, whose rows are unlabeled; a source's
	// rows carry Labels.
	Target bool
	// X holds the site's rows and Labels their label values (any
	// integers; nil for a target).
	X      *mat.Dense
	Labels []int
	// TestLabels, for a target only, are the label values of its rows
	// used to score its predictions; they never leave the site.
	TestLabels []int
	// TestX, for a target only, holds held-out rows (a benchmark's test
	// fold) that the site classifies and scores against TestLabels
	// instead of its own rows, scaled as they are. They never leave the
	// site and take no part in the federation, the summaries included.
	TestX *mat.Dense
	// Workers bounds the goroutines of the local updates (0: one per
	// core).
	Workers int
	// JoinTimeout bounds the wait for the federation to form; Idle the
	// wait for the coordinator's next message once it has.
	JoinTimeout, Idle time.Duration
	// Classifier trains the target's DaDiL-R and DaDiL-E classifiers
	// (nil: a softmax regression).
	Classifier classify.Trainer
	// Log, if not nil, receives remarks: rounds trained, frames rejected.
	Log func(format string, a ...any)
}

// SiteResult is what a site keeps of a federation. Nothing of it but the
// atoms of the rounds (and their losses) was ever sent.
type SiteResult struct {
	ID      int
	Labels  []int     // the federation's label values
	Trained []int     // the rounds in which the site trained
	Loss    []float64 // its local loss in each of them
	// Alpha is the site's barycentric coordinates α_ℓ, Atoms the final
	// atoms.
	Alpha []float64
	Atoms []dictionary.Atom
	// For a target: its DaDiL-R/E model on the final atoms and its own α,
	// the predicted label values of its rows (of TestX when given), and
	// their accuracies against TestLabels (NaN without them).
	Model                *dictionary.Model
	PredictR, PredictE   []int
	AccuracyR, AccuracyE float64
}

type siteRun struct {
	nc  *nats.Conn
	cfg SiteConfig
	w   welcome
	dom dataset.Domain
	res *SiteResult
	// inbox is the subject of the federation joined last, frames its
	// messages (run).
	inbox  string
	frames chan *nats.Msg
	// announces receives the announcements of forming coordinators;
	// seen is the instance whose announcement last made the site send
	// its hello, gone the instance of a coordinator the site left.
	announces  chan *nats.Msg
	seen, gone string
	// The message being assembled and its key (see frame), and the key
	// of the last one completed or failed.
	asm       *Assembler
	cur, done uint64
	// spare is the memory of the last round's atoms, which the next
	// round's are assembled into.
	spare []float64
	// scaled: the federation's scaling has been applied to dom.X, and to
	// test, the rows classify scores (cfg.TestX, or nil for dom.X).
	scaled bool
	test   *mat.Dense
	// The frames of the last update sent (in enc's memory), its round
	// and a hash of the atoms it was computed from: a restarted
	// coordinator that sends these atoms again gets the same update back.
	enc       Encoder
	lastUp    [][]byte
	lastRound uint32
	lastIn    uint64
	// opt is the local optimisers' state kept from round to round when
	// the coordinator asks for it (welcome.KeepState).
	opt dictionary.LocalState
}

// Join runs a site on the connection nc: it joins the federation, then
// trains on the atoms of every round it is chosen for (Config.LocalEpochs
// epochs of dictionary.FitLocal, from its own α, which stays here) and
// sends back the atoms, until the final atoms arrive. A target then fits
// its α to the final atoms (the atoms fixed, as many epochs), trains
// DaDiL-R and DaDiL-E (dictionary.NewModel) and classifies its rows.
//
// The site speaks only on subjects that name it (P.join.<Name>,
// P.up.<Name>, P.ack.<Name>, P.site.<Name>.>): nc should be connected
// with ConnOptions.Site set to Name, so that the replies to its requests
// arrive there too. If a new coordinator announces itself before the
// atoms have started (the one the site joined is gone), the site forgets
// that federation and joins the new one.
func Join(ctx context.Context, nc *nats.Conn, cfg SiteConfig) (*SiteResult, error) {
	s, err := newSite(nc, cfg)
	if err != nil {
		return nil, err
	}
	sub, err := nc.ChanSubscribe(announceSubject(s.cfg.Subject), s.announces)
	if err != nil {
		return nil, fmt.Errorf("federate: subscribe %s: %w", announceSubject(s.cfg.Subject), err)
	}
	defer sub.Unsubscribe()
	for {
		res, err := s.run(ctx)
		if !errors.Is(err, errNewCoordinator) {
			return res, err
		}
		s.cfg.Log("site %s: a new coordinator (%s) is forming the federation: joining it", s.cfg.Name, s.seen)
		s.reset()
	}
}

// errNewCoordinator ends a site's run when a new coordinator forms the
// federation.
var errNewCoordinator = errors.New("federate: a new coordinator")

// run joins the federation and takes part in it until the final atoms.
// Every federation joined gets a new inbox, so that the frames a gone
// coordinator sent (its last round's atoms, its scaling) cannot reach the
// site once it has joined the next one.
func (s *siteRun) run(ctx context.Context) (*SiteResult, error) {
	s.inbox, s.frames = inboxPrefix(s.cfg.Subject, s.cfg.Name)+nuid.Next(), make(chan *nats.Msg, 1024)
	sub, err := s.nc.ChanSubscribe(s.inbox, s.frames)
	if err != nil {
		return nil, fmt.Errorf("federate: subscribe %s: %w", s.inbox, err)
	}
	defer sub.Unsubscribe()
	if err := s.join(ctx); err != nil {
		return nil, err
	}
	if err := s.summarize(); err != nil {
		return nil, err
	}
	return s.loop(ctx)
}

// reset forgets the federation the site joined: its welcome, its α, the
// scaling, the messages under way.
func (s *siteRun) reset() {
	s.gone = s.w.Instance
	s.w, s.res, s.dom, s.scaled, s.test = welcome{}, nil, dataset.Domain{}, false, nil
	s.asm, s.cur, s.done = nil, 0, 0
	s.lastUp, s.lastRound, s.lastIn = nil, 0, 0
	s.opt = dictionary.LocalState{}
}

// announced decodes an announcement and returns the instance it names,
// or "" if it is malformed or of the coordinator the site left.
func (s *siteRun) announced(m *nats.Msg) string {
	var a announce
	if err := decodeControl(m.Data, &a); err != nil || a.Version != Version || a.Instance == "" || a.Instance == s.gone {
		return ""
	}
	return a.Instance
}

// refused returns an error if the server refused one of the site's
// messages for want of permission (its credential is another site's).
func (s *siteRun) refused() error {
	if err := s.nc.LastError(); errors.Is(err, nats.ErrPermissionViolation) {
		return fmt.Errorf("federate: site %s: the NATS server refused a message (is the credential site %s's?): %w", s.cfg.Name, s.cfg.Name, err)
	}
	return nil
}

func newSite(nc *nats.Conn, cfg SiteConfig) (*siteRun, error) {
	if cfg.Subject == "" {
		cfg.Subject = DefaultSubject
	}
	if !validPrefix(cfg.Subject) {
		return nil, protocolErr("subject prefix %q", cfg.Subject)
	}
	if cfg.X == nil || cfg.X.IsEmpty() {
		return nil, protocolErr("site %s has no rows", cfg.Name)
	}
	r, _ := cfg.X.Dims()
	switch {
	case cfg.Target && cfg.Labels != nil:
		return nil, protocolErr("target site %s: its labels may only be TestLabels", cfg.Name)
	case !cfg.Target && len(cfg.Labels) != r:
		return nil, protocolErr("source site %s: %d rows, %d labels", cfg.Name, r, len(cfg.Labels))
	case cfg.TestX != nil:
		if err := checkTestRows(cfg); err != nil {
			return nil, err
		}
	case cfg.TestLabels != nil && len(cfg.TestLabels) != r:
		return nil, protocolErr("site %s: %d rows, %d test labels", cfg.Name, r, len(cfg.TestLabels))
	}
	if cfg.JoinTimeout <= 0 {
		cfg.JoinTimeout = 10 * time.Minute
	}
	if cfg.Idle <= 0 {
		cfg.Idle = 10 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = func(string, ...any) {}
	}
	if !ValidSiteName(cfg.Name) {
		return nil, protocolErr("site name %q: want 1 to %d printable characters, no space, '.', '*' or '>'", cfg.Name, maxName)
	}
	return &siteRun{nc: nc, cfg: cfg, announces: make(chan *nats.Msg, 64)}, nil
}

// checkTestRows checks a site's held-out rows against its rows and test
// labels.
func checkTestRows(cfg SiteConfig) error {
	r, c := cfg.TestX.Dims()
	_, d := cfg.X.Dims()
	switch {
	case !cfg.Target:
		return protocolErr("source site %s: only a target has test rows", cfg.Name)
	case c != d:
		return protocolErr("site %s: %d features, %d in its test rows", cfg.Name, d, c)
	case len(cfg.TestLabels) != r:
		return protocolErr("site %s: %d test rows, %d test labels", cfg.Name, r, len(cfg.TestLabels))
	}
	return nil
}

// join sends the hello and waits for the welcome, then encodes the rows'
// labels as the federation's classes.
func (s *siteRun) join(ctx context.Context) error {
	var labels []int
	if !s.cfg.Target {
		labels = slices.Compact(slices.Sorted(slices.Values(s.cfg.Labels)))
	}
	role := RoleSource
	if s.cfg.Target {
		role = RoleTarget
	}
	_, d := s.cfg.X.Dims()
	b, err := json.Marshal(hello{Version: Version, Name: s.cfg.Name, Role: role, Features: d, Labels: labels, Inbox: s.inbox})
	if err != nil {
		return err
	}
	m, err := s.hello(ctx, b)
	if errors.Is(err, nats.ErrPermissionViolation) {
		return err
	}
	if err != nil {
		return fmt.Errorf("federate: site %s: join: %w", s.cfg.Name, err)
	}
	if err := decodeControl(m.Data, &s.w); err != nil {
		return err
	}
	if err := s.w.check(d, labels); err != nil {
		return fmt.Errorf("federate: site %s: %w", s.cfg.Name, err)
	}
	s.dom, s.test = dataset.Domain{Name: s.cfg.Name, X: s.cfg.X}, s.cfg.TestX
	if !s.cfg.Target {
		if s.dom.Y, err = (&dataset.Classes{Values: s.w.Labels}).Encode(s.cfg.Labels); err != nil {
			return err
		}
	}
	s.res = &SiteResult{ID: s.w.ID, Labels: s.w.Labels, AccuracyR: math.NaN(), AccuracyE: math.NaN()}
	s.cfg.Log("site %s: joined as site %d of a federation of %v atoms", s.cfg.Name, s.w.ID, s.w.Shape)
	return nil
}

// hello sends the hello b and returns the welcome, waiting at most
// SiteConfig.JoinTimeout. When a new coordinator announces itself the
// hello goes again (the one sent may have reached a coordinator now
// gone).
func (s *siteRun) hello(ctx context.Context, b []byte) (*nats.Msg, error) {
	jctx, cancel := context.WithTimeout(ctx, s.cfg.JoinTimeout)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	type reply struct {
		m   *nats.Msg
		err error
	}
	for {
		actx, stop := context.WithCancel(jctx)
		got := make(chan reply, 1)
		go func() {
			m, err := request(actx, s.nc, joinSubject(s.cfg.Subject, s.cfg.Name), b)
			got <- reply{m, err}
		}()
	wait:
		for {
			select {
			case r := <-got:
				stop()
				return r.m, r.err
			case a := <-s.announces:
				if in := s.announced(a); in != "" && in != s.seen {
					s.seen = in
					break wait
				}
			case <-tick.C:
				if err := s.refused(); err != nil {
					stop()
					return nil, err
				}
			}
		}
		stop()
		<-got
	}
}

// loop handles the coordinator's frames until the final atoms.
func (s *siteRun) loop(ctx context.Context) (*SiteResult, error) {
	idle := time.NewTimer(s.cfg.Idle)
	defer idle.Stop()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	reconnects := s.nc.Stats().Reconnects
	for {
		select {
		case a := <-s.announces:
			if in := s.announced(a); in != "" && in != s.w.Instance {
				s.seen = in
				return nil, errNewCoordinator
			}
		case <-tick.C:
			if err := s.refused(); err != nil {
				return nil, err
			}
			// The last update may have been lost while the server was
			// away; the coordinator takes it only for the round under
			// way and from the atoms of that round.
			if n := s.nc.Stats().Reconnects; n != reconnects {
				reconnects = n
				if s.lastUp != nil {
					s.resend()
				}
			}
		case m := <-s.frames:
			idle.Reset(s.cfg.Idle)
			if m.Reply != "" { // the coordinator checks that the site is reachable
				m.Respond(nil)
				continue
			}
			msg := s.frame(m.Data)
			if msg == nil {
				continue
			}
			switch msg.Kind {
			case KindFinal:
				return s.finish(msg)
			case KindScale:
				s.scale(msg)
				continue
			}
			s.spare = msg.Data // a round's atoms are not kept past their round
			if msg.Round == s.lastRound && s.lastUp != nil && HashValues(msg.Data) == s.lastIn {
				s.resend()
				continue
			}
			if s.w.Scaled && !s.scaled {
				s.cfg.Log("site %s: round %d: the federation's scaling has not arrived; the site misses the round", s.cfg.Name, msg.Round)
				continue
			}
			s.cfg.Log("site %s: round %d: training", s.cfg.Name, msg.Round)
			if err := s.train(msg); err != nil {
				s.cfg.Log("site %s: round %d: %v", s.cfg.Name, msg.Round, err)
			}
		case <-idle.C:
			return nil, protocolErr("site %s: no message from the coordinator for %v", s.cfg.Name, s.cfg.Idle)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// frame adds a frame to the message being assembled, and returns the
// message it completes. Messages are ordered by their key, (round+1)·2,
// plus 1 for the final one: the scaling (round 0) first, then the rounds,
// the final atoms after the last round's. A frame of a later message than
// the one being assembled starts it, frames of earlier or completed
// messages are ignored.
func (s *siteRun) frame(b []byte) *Message {
	h, data, err := ParseFrame(b)
	if err != nil {
		s.cfg.Log("site %s: rejected a frame: %v", s.cfg.Name, err)
		return nil
	}
	if h.Client != uint32(s.w.ID) || h.Kind == KindUpdate {
		return nil
	}
	key := (uint64(h.Round) + 1) << 1
	if h.Kind == KindFinal {
		key |= 1
	}
	shape := s.w.Shape
	switch {
	case h.Kind == KindSummary:
		return nil
	case h.Kind == KindScale:
		shape = ScaleShape(s.w.Shape.D)
	case h.Kind == KindRound && s.w.ShareMoments && h.Shape == shape.withMoments():
		shape = h.Shape // the atoms and the sites' mean second moments
	}
	// A round's atoms sent again (by a restarted coordinator) after the
	// site trained on them are assembled again.
	again := key == s.done && h.Kind == KindRound && h.Round == s.lastRound
	switch {
	case (key <= s.done && !again) || (s.asm != nil && key < s.cur):
		return nil
	case s.asm == nil || key > s.cur:
		s.asm, s.cur = NewAssembler(h.Kind, h.Round, h.Client, shape), key
		if h.Kind == KindRound {
			s.asm.Recycle(s.spare)
		}
	}
	done, err := s.asm.Add(h, data)
	if err != nil {
		s.cfg.Log("site %s: rejected the %v message of round %d: %v", s.cfg.Name, h.Kind, h.Round, err)
		s.asm, s.done = nil, key
		return nil
	}
	if !done {
		return nil
	}
	m := s.asm.Message()
	s.asm, s.done = nil, key
	return m
}

// train runs the local epochs of round m and sends the atoms back.
func (s *siteRun) train(m *Message) error {
	all, err := Unpack(m.Data, m.Shape)
	if err != nil {
		return err
	}
	atoms := all[:s.w.Shape.K]
	set := s.w.Settings
	set.Seed, set.Workers = m.Aux, s.cfg.Workers
	start := dictionary.LocalStart{Atoms: atoms, Alpha: s.res.Alpha}
	if s.w.KeepState {
		start.State = &s.opt
		if s.w.ShareMoments {
			shareMoments(&s.opt, all[s.w.Shape.K:])
		}
	}
	d, err := dictionary.FitLocal(s.dom, m.Shape.C, start, &set)
	if err != nil {
		return err
	}
	s.res.Alpha = mat.Row(nil, 0, d.Alpha)
	loss := d.History.Loss[len(d.History.Loss)-1]
	if s.w.WeighMoves {
		WeighMoves(d.Atoms, atoms, s.res.Alpha)
	}
	data, sh, err := Pack(d.Atoms)
	if err != nil {
		return err
	}
	if s.w.ShareMoments {
		v := len(data)
		if data, sh = appendMoments(data, &s.opt), sh.withMoments(); len(data) != 2*v {
			return fmt.Errorf("federate: site %s: no second moments to share (does it keep its state?)", s.cfg.Name)
		}
	}
	base := HashValues(m.Data)
	s.lastUp = nil // its frames' memory is reused
	frames, err := s.enc.Encode(&Message{Kind: KindUpdate, Round: m.Round, Client: m.Client, Shape: sh, Aux: math.Float64bits(loss), Base: base, Data: data}, int(s.nc.MaxPayload()))
	if err != nil {
		return err
	}
	for _, f := range frames {
		if err := s.nc.Publish(upSubject(s.cfg.Subject, s.cfg.Name), f); err != nil {
			return err
		}
	}
	s.lastUp, s.lastRound, s.lastIn = frames, m.Round, base
	s.res.Trained = append(s.res.Trained, int(m.Round))
	s.res.Loss = append(s.res.Loss, loss)
	s.cfg.Log("site %s: round %d: local loss %.6g", s.cfg.Name, m.Round, loss)
	return s.nc.Flush()
}

// finish keeps the final atoms, acknowledges them and, for a target,
// fits α, trains the model and classifies the rows.
func (s *siteRun) finish(m *Message) (*SiteResult, error) {
	atoms, err := Unpack(m.Data, m.Shape)
	if err != nil {
		return nil, err
	}
	s.res.Atoms = atoms
	if b, err := json.Marshal(ack{ID: s.w.ID, Round: m.Round}); err == nil {
		s.nc.Publish(ackSubject(s.cfg.Subject, s.cfg.Name), b)
		s.nc.Flush()
	}
	if !s.cfg.Target {
		return s.res, nil
	}
	set := s.w.Settings
	set.Workers = s.cfg.Workers
	d, err := dictionary.FitLocal(s.dom, m.Shape.C, dictionary.LocalStart{Atoms: atoms, Alpha: s.res.Alpha, FixAtoms: true}, &set)
	if err != nil {
		return nil, fmt.Errorf("federate: site %s: final α: %w", s.cfg.Name, err)
	}
	s.res.Alpha = mat.Row(nil, 0, d.Alpha)
	if s.res.Model, err = dictionary.NewModel(d, 0, s.cfg.Classifier, set.Seed); err != nil {
		return nil, fmt.Errorf("federate: site %s: %w", s.cfg.Name, err)
	}
	return s.res, s.classify()
}

// classify predicts the target's rows with DaDiL-R and DaDiL-E and scores
// them against TestLabels.
func (s *siteRun) classify() error {
	for _, p := range []struct {
		predict func(*mat.Dense) ([]int, error)
		out     *[]int
		acc     *float64
	}{{s.res.Model.PredictR, &s.res.PredictR, &s.res.AccuracyR}, {s.res.Model.PredictE, &s.res.PredictE, &s.res.AccuracyE}} {
		rows := s.dom.X
		if s.test != nil {
			rows = s.test
		}
		idx, err := p.predict(rows)
		if err != nil {
			return err
		}
		*p.out = make([]int, len(idx))
		ok := 0
		for i, k := range idx {
			(*p.out)[i] = s.w.Labels[k]
			if s.cfg.TestLabels != nil && s.cfg.TestLabels[i] == (*p.out)[i] {
				ok++
			}
		}
		if s.cfg.TestLabels != nil {
			*p.acc = float64(ok) / float64(len(idx))
		}
	}
	return nil
}

// request sends a request on subj and returns the reply, retrying every
// 200 ms while no coordinator listens (it may start after the site).
func request(ctx context.Context, nc *nats.Conn, subj string, b []byte) (*nats.Msg, error) {
	for {
		m, err := nc.RequestWithContext(ctx, subj, b)
		if !errors.Is(err, nats.ErrNoResponders) {
			return m, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("no coordinator answered on %s: %w", subj, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// summarize sends the summary the welcome asks for, if any: the ranges of
// the site's features and, for a source, its classes' statistics
// (SummaryShape), computed on its rows as they are.
func (s *siteRun) summarize() error {
	if !s.w.Ranges && !s.w.Classes {
		return nil
	}
	sh := SummaryShape(s.w.Shape.D, s.w.Shape.C)
	data := summarize(s.dom.X, s.dom.Y, s.w.Shape.C, s.w.Ranges, s.w.Classes)
	frames, err := Encode(&Message{Kind: KindSummary, Client: uint32(s.w.ID), Shape: sh, Data: data}, int(s.nc.MaxPayload()))
	if err != nil {
		return err
	}
	for _, f := range frames {
		if err := s.nc.Publish(upSubject(s.cfg.Subject, s.cfg.Name), f); err != nil {
			return fmt.Errorf("federate: site %s: summary: %w", s.cfg.Name, err)
		}
	}
	s.cfg.Log("site %s: sent its summary (ranges %v, class statistics %v)", s.cfg.Name, s.w.Ranges, s.w.Classes && !s.cfg.Target)
	return s.nc.Flush()
}

// scale applies the federation's scaling (a KindScale message) to the
// site's rows, once.
func (s *siteRun) scale(m *Message) {
	if s.scaled || !s.w.Scaled {
		return
	}
	d := s.w.Shape.D
	sc := &dataset.Scaler{Kind: dataset.ScaleMinMax, Offset: m.Data[:d], Scale: m.Data[d : 2*d]}
	for j, f := range sc.Scale {
		if !(f > 0) {
			s.cfg.Log("site %s: rejected the scaling: feature %d has factor %g", s.cfg.Name, j+1, f)
			return
		}
	}
	var X, T mat.Dense
	if err := sc.Transform(&X, s.cfg.X); err != nil {
		s.cfg.Log("site %s: rejected the scaling: %v", s.cfg.Name, err)
		return
	}
	if s.cfg.TestX != nil {
		if err := sc.Transform(&T, s.cfg.TestX); err != nil {
			s.cfg.Log("site %s: rejected the scaling: %v", s.cfg.Name, err)
			return
		}
		s.test = &T
	}
	s.dom.X, s.scaled = &X, true
	s.cfg.Log("site %s: scaled its features", s.cfg.Name)
}

// resend sends the last update again.
func (s *siteRun) resend() {
	s.cfg.Log("site %s: round %d: sending its update again", s.cfg.Name, s.lastRound)
	for _, f := range s.lastUp {
		if err := s.nc.Publish(upSubject(s.cfg.Subject, s.cfg.Name), f); err != nil {
			s.cfg.Log("site %s: round %d: %v", s.cfg.Name, s.lastRound, err)
			return
		}
	}
	s.nc.Flush()
}
