package federate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
)

// Config configures the coordinator (Serve).
type Config struct {
	// Subject is the prefix of the federation's subjects (default
	// DefaultSubject).
	Subject string
	// Sites is the number of sites that must join before round 1.
	Sites int
	// Rounds is the number of rounds, LocalEpochs the epochs of
	// Algorithm 2 every chosen site runs per round, and Fraction the
	// fraction C ∈ (0, 1] of the sites chosen every round (⌈C·N⌉, at
	// least one).
	Rounds, LocalEpochs int
	Fraction            float64
	// Aggregation merges the answering sites' atoms into the round's
	// candidate, and Server steps the atoms towards it (the defaults:
	// the element-wise mean, taken as it is).
	Aggregation Aggregation
	Server      Server
	// KeepLocalState makes every site keep its local optimisers' state
	// (Adam's moments of the atoms and of its α) from one round it
	// trains in to the next, instead of starting them afresh every round;
	// the state never leaves the site, and a site that rejoins starts it
	// afresh.
	KeepLocalState bool
	// WeighMoves makes every site scale its move of atom k by K·α_ℓk
	// before sending it (see WeighMoves), so that, as in the centralised
	// fit, a domain pulls an atom in proportion to its weight in that
	// domain's barycenter.
	WeighMoves bool
	// SourceLogits makes Average and WBary take the atoms' label logits
	// as the mean of the answering sources' alone. A target's loss gives
	// the logits no gradient, so its update holds them as they were: in
	// the mean of all the sites it would slow their learning by the
	// target's share, which the centralised fit, whose logits' gradient
	// is the sources' alone, does not. Random is unaffected.
	SourceLogits bool
	// ShareMoments makes the sites divide their gradients by the same
	// Adam second moments, as the centralised fit's single Adam does
	// (moments.go): every site sends, after its atoms, its atoms'
	// second moments; the coordinator sends their mean over the sites
	// that answered the last round with the next round's atoms, and
	// every site that keeps its state replaces its own by it before its
	// local epochs. It doubles the bytes of every round. It needs
	// KeepLocalState and excludes WeighMoves (the gradients keep α's
	// factor).
	ShareMoments bool
	// RoundTimeout bounds the wait for the chosen sites' updates: a site
	// that has not answered by then misses the round. JoinTimeout bounds
	// the wait for the Sites sites to join.
	RoundTimeout, JoinTimeout time.Duration
	// Seed seeds the initial atoms, the choice of sites, the Random
	// aggregation and every local update.
	Seed uint64
	// Settings are the settings of the local updates (K, n, n_b, η, β,
	// …; zero fields take dictionary's defaults, K the number of
	// sources). Epochs, PlateauTol, Seed and Init are set by the
	// coordinator.
	Settings dictionary.Settings
	// Start selects how the atoms start: from the sources' class
	// summaries (StartSummary, the default) or from N(0, I)
	// (StartGaussian).
	Start Start
	// Scaling is the scaling of the features every site applies before
	// the first round: dataset.ScaleNone (the default) or
	// dataset.ScaleMinMax, the min-max scaling of all the sites' rows
	// together, computed from every site's per-feature minimum and
	// maximum.
	Scaling dataset.Scaling
	// State, if not empty, names a JetStream object store bucket on the
	// server where the coordinator keeps its state (the federation, the
	// atoms and the last completed round) after the atoms start and
	// after every round; a coordinator started with a saved state of its
	// subject prefix resumes from the round after it, sending its atoms to
	// the sites, which have kept running. The state is deleted once the
	// federation has finished.
	State string
	// Progress, if not nil, receives every finished round.
	Progress func(RoundStats)
	// Log, if not nil, receives remarks: sites joining, rejected frames,
	// sites missing a round.
	Log func(format string, a ...any)
}

// RoundStats describes one finished round.
type RoundStats struct {
	Round, Rounds int
	// Chosen are the ids of the sites sent the atoms, Answered those
	// whose update was aggregated, both in increasing order.
	Chosen, Answered []int
	// Loss is the mean over the answering sites of their local loss in
	// their last local epoch; NaN if none answered (the atoms then stay
	// as they were).
	Loss float64
	// BytesOut and BytesIn count the frames' bytes sent and received in
	// the round, those sent again after a reconnection too.
	BytesOut, BytesIn int64
	Elapsed           time.Duration
}

// Result is the outcome of a federation.
type Result struct {
	// Atoms are the final atoms; Start the atoms of the first round
	// (nil when the run resumed a saved state), scaled as the sites
	// scale their rows.
	Atoms []dictionary.Atom
	Start []dictionary.Atom
	// Sites are the sites' names, by id; Targets the ids of the targets.
	Sites   []string
	Targets []int
	Labels  []int // the federation's label values: class k is Labels[k]
	Rounds  []RoundStats
	// Acknowledged counts the sites that acknowledged the final atoms.
	Acknowledged int
	// FirstRound is the first round run by this call: 1, or the round
	// after a saved state's (Config.State).
	FirstRound int
	// Summarized lists the ids of the sites whose summary arrived before
	// the first round (none when no summary was asked), SummaryBytes the
	// bytes of their frames; Scaler is the federation's scaling (nil for
	// dataset.ScaleNone).
	Summarized   []int
	SummaryBytes int64
	Scaler       *dataset.Scaler
}

// site is the coordinator's record of one site.
type site struct {
	hello
	pending *nats.Msg // its join request, answered once the federation forms
}

type coordinator struct {
	nc         *nats.Conn
	cfg        Config
	sites      []*site
	byName     map[string]int
	labels     []int
	shape      Shape
	local      dictionary.Settings
	atoms      []float64
	agg        *aggregator     // the aggregation and the server optimiser's state
	moments    []float64       // the sites' mean second moments (ShareMoments), nil before the first round
	wire       []float64       // the atoms followed by moments, once there are any (prepare)
	started    bool            // the atoms have started (after the summaries)
	scaler     *dataset.Scaler // the federation's scaling, nil for none
	maxPayload int
	reconnects uint64 // the connection's reconnections seen so far
	enc        Encoder
	spare      map[int][]float64 // the last round's updates' memory, by site id
	instance   string            // this coordinator process, named in its welcomes and announcements
	joins, ups chan *nats.Msg
	acks       chan *nats.Msg
}

// Serve runs the coordinator of a federation on the connection nc: it
// waits for Config.Sites sites to join, runs Config.Rounds rounds and
// sends the final atoms to every site. Every round it sends the atoms to
// ⌈C·N⌉ sites chosen at random, waits for their updates at most
// Config.RoundTimeout, and aggregates those that arrived, in site-id
// order: given the seed, the atoms depend only on which sites answered.
// A frame that does not parse, or an update of the wrong shape or with
// non-finite values, is logged and costs its site the round; frames of
// other rounds, of sites not chosen and repeated frames are ignored.
func Serve(ctx context.Context, nc *nats.Conn, cfg Config) (*Result, error) {
	c, err := newCoordinator(nc, cfg)
	if err != nil {
		return nil, err
	}
	subs, err := c.subscribe()
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, s := range subs {
			s.Unsubscribe()
		}
	}()
	res := &Result{FirstRound: 1}
	store, err := c.open(ctx, res)
	if err != nil {
		return nil, err
	}
	if !c.started {
		stop := c.announce()
		err := c.form(ctx)
		if err == nil {
			err = c.start(ctx, res)
		}
		if err == nil {
			c.save(ctx, store, 0)
		}
		stop()
		if err != nil {
			return nil, err
		}
	}
	res.Labels = c.labels
	for id, s := range c.sites {
		res.Sites = append(res.Sites, s.Name)
		if s.Role == RoleTarget {
			res.Targets = append(res.Targets, id)
		}
	}
	for r := res.FirstRound; r <= c.cfg.Rounds; r++ {
		st, err := c.round(ctx, uint32(r))
		if err != nil {
			return nil, err
		}
		c.save(ctx, store, r)
		res.Rounds = append(res.Rounds, st)
		if c.cfg.Progress != nil {
			c.cfg.Progress(st)
		}
	}
	if res.Acknowledged, err = c.final(ctx); err != nil {
		return nil, err
	}
	if store != nil {
		if err := store.obs.Delete(ctx, store.name); err != nil {
			c.cfg.Log("delete the finished federation's state: %v", err)
		}
	}
	atoms, err := Unpack(c.atoms, c.shape)
	res.Atoms = atoms
	return res, err
}

// open opens the state store of Config.State, if any, and resumes from
// the state saved there, if any, setting res.FirstRound.
func (c *coordinator) open(ctx context.Context, res *Result) (*stateStore, error) {
	if c.cfg.State == "" {
		return nil, nil
	}
	store, err := openState(ctx, c.nc, c.cfg.State, c.cfg.Subject)
	if err != nil {
		return nil, err
	}
	saved, atoms, err := store.load(ctx)
	if err != nil || saved == nil {
		return store, err
	}
	if err := c.resume(saved, atoms); err != nil {
		return nil, err
	}
	res.FirstRound = saved.Round + 1
	if c.scaler != nil {
		res.Scaler = c.scaler
	}
	c.cfg.Log("resumed the federation of %d sites after round %d from the state in %s", len(c.sites), saved.Round, c.cfg.State)
	c.cfg.Log("%d of %d sites reachable", len(c.reach(ctx, c.ids())), len(c.sites))
	return store, nil
}

// announce publishes the coordinator's instance on P.coordinator every
// announceEvery until the returned function is called: sites that joined
// a coordinator gone before the atoms started (or wait for its welcome)
// see a new instance and join again.
func (c *coordinator) announce() (stop func()) {
	b, _ := json.Marshal(announce{Version: Version, Instance: c.instance}) // plain data: cannot fail
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(announceEvery)
		defer tick.Stop()
		for {
			c.nc.Publish(announceSubject(c.cfg.Subject), b)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// save saves the state after round r, if there is a store; a failure is
// logged, and a restart then resumes from an earlier round.
func (c *coordinator) save(ctx context.Context, store *stateStore, r int) {
	if store == nil {
		return
	}
	values := append([][]float64{c.atoms}, c.agg.mom...)
	if c.moments != nil {
		values = append(values, c.moments)
	}
	if err := store.save(ctx, c.snapshot(r), values...); err != nil {
		c.cfg.Log("%v", err)
	}
}

func newCoordinator(nc *nats.Conn, cfg Config) (*coordinator, error) {
	if cfg.Subject == "" {
		cfg.Subject = DefaultSubject
	}
	switch {
	case !validPrefix(cfg.Subject):
		return nil, protocolErr("subject prefix %q", cfg.Subject)
	case cfg.Sites < 1 || cfg.Sites > math.MaxInt32:
		return nil, protocolErr("%d sites expected", cfg.Sites)
	case cfg.Rounds < 1 || cfg.LocalEpochs < 1:
		return nil, protocolErr("%d rounds of %d local epochs", cfg.Rounds, cfg.LocalEpochs)
	case !(cfg.Fraction > 0 && cfg.Fraction <= 1):
		return nil, protocolErr("client fraction %g (want 0 < C ≤ 1)", cfg.Fraction)
	case cfg.RoundTimeout <= 0 || cfg.JoinTimeout <= 0:
		return nil, protocolErr("timeouts must be positive")
	case cfg.Scaling != dataset.ScaleNone && cfg.Scaling != dataset.ScaleMinMax:
		return nil, protocolErr("scaling %v (want none or minmax)", cfg.Scaling)
	case cfg.Start != StartSummary && cfg.Start != StartGaussian:
		return nil, protocolErr("start %v", cfg.Start)
	case cfg.Aggregation < Average || cfg.Aggregation > WBary:
		return nil, protocolErr("aggregation %d", int(cfg.Aggregation))
	case cfg.ShareMoments && (!cfg.KeepLocalState || cfg.WeighMoves):
		return nil, protocolErr("shared second moments need the sites' kept state and moves not weighed (KeepLocalState %v, WeighMoves %v)", cfg.KeepLocalState, cfg.WeighMoves)
	}
	if err := cfg.Server.resolved().check(); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = func(string, ...any) {}
	}
	return &coordinator{nc: nc, cfg: cfg, byName: map[string]int{}, maxPayload: int(nc.MaxPayload()), reconnects: nc.Stats().Reconnects, instance: nuid.Next(),
		joins: make(chan *nats.Msg, 256), ups: make(chan *nats.Msg, 4096), acks: make(chan *nats.Msg, 256)}, nil
}

func (c *coordinator) subscribe() ([]*nats.Subscription, error) {
	p := c.cfg.Subject
	var subs []*nats.Subscription
	for _, s := range []struct {
		subj string
		ch   chan *nats.Msg
	}{{joinSubject(p, "*"), c.joins}, {upSubject(p, "*"), c.ups}, {ackSubject(p, "*"), c.acks}} {
		sub, err := c.nc.ChanSubscribe(s.subj, s.ch)
		if err != nil {
			for _, o := range subs {
				o.Unsubscribe()
			}
			return nil, fmt.Errorf("federate: subscribe %s: %w", s.subj, err)
		}
		subs = append(subs, sub)
	}
	return subs, c.nc.Flush()
}

// form waits for Config.Sites sites to join, then shapes and starts the
// atoms and answers every join.
func (c *coordinator) form(ctx context.Context) error {
	timer := time.NewTimer(c.cfg.JoinTimeout)
	defer timer.Stop()
	for len(c.sites) < c.cfg.Sites {
		select {
		case m := <-c.joins:
			c.join(m)
		case <-timer.C:
			c.refuseAll("the federation did not form")
			return protocolErr("%d of %d sites joined within %v", len(c.sites), c.cfg.Sites, c.cfg.JoinTimeout)
		case <-ctx.Done():
			c.refuseAll("the coordinator stopped")
			return ctx.Err()
		}
	}
	// Ids follow the names, not the order of arrival, so that
	// aggregation in id order does not depend on timing.
	slices.SortFunc(c.sites, func(a, b *site) int { return strings.Compare(a.Name, b.Name) })
	for id, s := range c.sites {
		c.byName[s.Name] = id
	}
	if err := c.shapeUp(); err != nil {
		c.refuseAll(err.Error())
		return err
	}
	for id, s := range c.sites {
		c.welcome(s.pending, id)
		s.pending = nil
	}
	return nil
}

// join handles a join request: a new site before the federation forms,
// or a known one (by name) rejoining at any time.
func (c *coordinator) join(m *nats.Msg) {
	var h hello
	err := decodeControl(m.Data, &h)
	if err == nil {
		err = h.check(c.cfg.Subject)
	}
	if from := siteOf(joinSubject(c.cfg.Subject, ""), m.Subject); err == nil && from != h.Name {
		// The subject is what the server's permissions bind to the
		// site's credential: a site may not join in another's name.
		err = protocolErr("a hello on %s names site %s", m.Subject, h.Name)
	}
	if err == nil && len(c.sites) > 0 && h.Features != c.sites[0].Features {
		err = protocolErr("site %s has %d features, site %s %d", h.Name, h.Features, c.sites[0].Name, c.sites[0].Features)
	}
	id, known := c.byName[h.Name]
	formed := c.shape.K > 0
	switch {
	case err != nil:
	case known && c.sites[id].Role != h.Role:
		err = protocolErr("site %s joined as a %s and rejoins as a %s", h.Name, c.sites[id].Role, h.Role)
	case known && formed && !slices.Equal(c.sites[id].Labels, h.Labels):
		err = protocolErr("site %s rejoins with other label values", h.Name)
	case !known && formed:
		err = protocolErr("the federation of %d sites is complete; %s is not one of them", len(c.sites), h.Name)
	}
	if err != nil {
		c.cfg.Log("join refused: %v", err)
		c.reply(m, welcome{Error: err.Error()})
		return
	}
	if !known {
		id = len(c.sites)
		c.byName[h.Name] = id
		c.sites = append(c.sites, &site{})
	}
	s := c.sites[id]
	if s.pending != nil { // a second join before the federation formed
		c.reply(s.pending, welcome{Error: "superseded by a later join of the same site"})
	}
	s.hello, s.pending = h, m
	c.cfg.Log("site %s (%s) joined", h.Name, h.Role)
	if formed {
		c.welcome(m, id)
		s.pending = nil
	}
}

// welcome answers site id's join: before the atoms start it asks for the
// summary the start needs; after, it sends the site the federation's
// scaling.
func (c *coordinator) welcome(m *nats.Msg, id int) {
	w := welcome{Instance: c.instance, ID: id, Rounds: c.cfg.Rounds, Labels: c.labels, Shape: c.shape, Settings: c.local, KeepState: c.cfg.KeepLocalState, WeighMoves: c.cfg.WeighMoves,
		ShareMoments: c.cfg.ShareMoments,
		Scaled:       c.scaler != nil || (!c.started && c.cfg.Scaling != dataset.ScaleNone)}
	if !c.started {
		w.Ranges = w.Scaled
		w.Classes = c.cfg.Start == StartSummary && c.sites[id].Role == RoleSource
	}
	c.reply(m, w)
	if c.started && c.scaler != nil {
		c.sendScale(id)
	}
}

func (c *coordinator) reply(m *nats.Msg, w welcome) {
	b, err := json.Marshal(w)
	if err == nil {
		err = m.Respond(b)
	}
	if err != nil {
		c.cfg.Log("reply to a join: %v", err)
	}
}

func (c *coordinator) refuseAll(why string) {
	for _, s := range c.sites {
		if s.pending != nil {
			c.reply(s.pending, welcome{Error: why})
		}
	}
}

// shapeUp sets the federation's label values (the union of the
// sources'), the settings of the local updates and the atoms' shape.
func (c *coordinator) shapeUp() error {
	sources := 0
	for _, s := range c.sites {
		if s.Role == RoleSource {
			sources++
			c.labels = append(c.labels, s.Labels...)
		}
	}
	if sources == 0 {
		return errors.New("federate: no source site joined")
	}
	slices.Sort(c.labels)
	c.labels = slices.Compact(c.labels)
	ncls := len(c.labels)
	set := c.cfg.Settings
	set.Progress = nil
	if set.ExtraAtoms < 0 || (set.ExtraAtoms > 0 && set.Atoms != 0) {
		return fmt.Errorf("federate: %d extra atoms with K = %d; want K, or a non-negative number of atoms beyond the sources", set.ExtraAtoms, set.Atoms)
	}
	// The defaults of a fit of the sources, as dictionary.Fit resolves
	// them. The coordinator does not know the sites' rows, with which
	// dictionary.DefaultSamples grows or shrinks the support: it resolves
	// DefaultSamplesPerClass per class.
	set = set.Resolved(dictionary.Sizes{Labeled: sources, Features: c.sites[0].Features, Classes: ncls})
	set.Epochs, set.PlateauTol, set.Seed, set.Init = c.cfg.LocalEpochs, -1, c.cfg.Seed, dictionary.InitGaussian
	c.local = set
	c.shape = Shape{K: set.Atoms, N: set.Samples, D: c.sites[0].Features, C: ncls}
	v, err := c.shape.Values()
	if err != nil {
		return err
	}
	c.atoms = make([]float64, v)
	c.agg, err = newAggregator(c.cfg.Aggregation, c.cfg.Server, c.shape, c.cfg.SourceLogits)
	return err
}

// round runs round r: it sends the atoms to the chosen sites, gathers
// their updates and aggregates them.
func (c *coordinator) round(ctx context.Context, r uint32) (RoundStats, error) {
	start := time.Now()
	st := RoundStats{Round: int(r), Rounds: c.cfg.Rounds, Chosen: choose(c.cfg.Seed, r, len(c.sites), c.cfg.Fraction), Loss: math.NaN()}
	c.prepare()
	st.BytesOut = c.sendRound(r, st.Chosen)
	up := c.shape
	if c.cfg.ShareMoments {
		up = up.withMoments()
	}
	got, tr, err := c.gather(ctx, KindUpdate, r, st.Chosen, up)
	st.BytesIn, st.BytesOut = tr.in, st.BytesOut+tr.resent
	if err != nil {
		return st, err
	}
	var updates, moments [][]float64
	var labeled []bool
	defer c.recycle(got)
	st.Loss = 0
	_, sent := c.message()
	base, v := HashValues(sent), len(c.atoms)
	for _, id := range st.Chosen {
		m := got[id]
		switch {
		case m == nil:
			continue
		case m.Base != base:
			c.cfg.Log("round %d: site %s: rejected an update computed from other atoms", r, c.sites[id].Name)
			continue
		case c.cfg.ShareMoments:
			if err := checkMoments(m.Data[v:]); err != nil {
				c.cfg.Log("round %d: site %s: rejected its update: %v", r, c.sites[id].Name, err)
				continue
			}
			moments = append(moments, m.Data[v:])
		}
		st.Answered = append(st.Answered, id)
		updates = append(updates, m.Data[:v:v])
		labeled = append(labeled, c.sites[id].Role == RoleSource)
		st.Loss += math.Float64frombits(m.Aux)
	}
	if len(updates) == 0 {
		st.Loss = math.NaN()
		c.cfg.Log("round %d: no site answered; the atoms stay", r)
	} else {
		st.Loss /= float64(len(updates))
		if err := c.agg.apply(c.atoms, updates, labeled, roundRand(c.cfg.Seed, r, 0xa99)); err != nil {
			return st, err
		}
		if c.cfg.ShareMoments {
			if c.moments, err = meanMoments(c.moments, moments); err != nil {
				return st, err
			}
		}
	}
	st.Elapsed = time.Since(start)
	return st, nil
}

// recycle keeps the memory of the round's updates for the next round's.
func (c *coordinator) recycle(got map[int]*Message) {
	if c.spare == nil {
		c.spare = map[int][]float64{}
	}
	for id, m := range got {
		if m != nil {
			c.spare[id] = m.Data
		}
	}
}

// prepare copies the round's atoms and the sites' mean second moments
// into wire, once there are moments (ShareMoments).
func (c *coordinator) prepare() {
	if c.moments != nil {
		c.wire = append(append(c.wire[:0], c.atoms...), c.moments...)
	}
}

// message returns the shape and values of the round's message (after
// prepare): the atoms themselves, or, once there are the sites' mean
// second moments, the atoms followed by them.
func (c *coordinator) message() (Shape, []float64) {
	if c.moments == nil {
		return c.shape, c.atoms
	}
	return c.shape.withMoments(), c.wire
}

// sendRound sends the atoms of round r to the sites ids, each with its
// seed, and returns the bytes sent.
func (c *coordinator) sendRound(r uint32, ids []int) int64 {
	out, err := c.sendAll(KindRound, r, ids, func(id int) uint64 { return siteSeed(c.cfg.Seed, r, id) })
	if err != nil {
		c.cfg.Log("round %d: %v", r, err)
	}
	return out
}

// reach waits, at most Config.RoundTimeout in all, until the sites ids
// answer a request on their inbox, so that after a restart of the
// coordinator or of the NATS server the atoms are not sent before the
// sites have reconnected. It returns the sites that answered.
func (c *coordinator) reach(ctx context.Context, ids []int) []int {
	deadline := time.Now().Add(c.cfg.RoundTimeout)
	var ok []int
	for _, id := range ids {
		for {
			_, err := c.nc.Request(c.sites[id].Inbox, nil, 250*time.Millisecond)
			if err == nil {
				ok = append(ok, id)
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				c.cfg.Log("site %s is not reachable: %v", c.sites[id].Name, err)
				break
			}
			if errors.Is(err, nats.ErrNoResponders) {
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
	return ok
}

// sendAll sends the atoms to the sites ids in a message of kind k and
// round r (a KindRound message the round's, message), encoded once and
// addressed to each site with its aux field, then flushes the connection.
// It returns the bytes sent; a site it cannot send to is logged and
// skipped.
func (c *coordinator) sendAll(k Kind, r uint32, ids []int, aux func(id int) uint64) (int64, error) {
	sh, data := c.shape, c.atoms
	if k == KindRound {
		sh, data = c.message()
	}
	frames, err := c.enc.Encode(&Message{Kind: k, Round: r, Shape: sh, Data: data}, c.maxPayload)
	if err != nil {
		return 0, err
	}
	var out int64
	for _, id := range ids {
		c.enc.Address(uint32(id), aux(id))
		n, err := c.publish(id, frames)
		out += n
		if err != nil {
			c.cfg.Log("%v of round %d to site %s: %v", k, r, c.sites[id].Name, err)
		}
	}
	return out, c.nc.Flush()
}

// sendMessage sends m to site id and returns the bytes sent.
func (c *coordinator) sendMessage(id int, m *Message) (int64, error) {
	frames, err := c.enc.Encode(m, c.maxPayload)
	if err != nil {
		return 0, err
	}
	return c.publish(id, frames)
}

// publish publishes the frames to site id's inbox and returns the bytes
// published.
func (c *coordinator) publish(id int, frames [][]byte) (int64, error) {
	var n int64
	for _, f := range frames {
		if err := c.nc.Publish(c.sites[id].Inbox, f); err != nil {
			return n, err
		}
		n += int64(len(f))
	}
	return n, nil
}

// traffic counts the bytes of a gather: received, and atoms sent again
// after a reconnection.
type traffic struct{ in, resent int64 }

// gather collects the messages of kind k (KindUpdate or KindSummary) and
// shape sh of round r from the chosen sites until all of them answered or
// failed, or the round's time is up. It returns the complete messages by
// site id and the bytes moved. Joins are answered meanwhile.
func (c *coordinator) gather(ctx context.Context, k Kind, r uint32, chosen []int, sh Shape) (map[int]*Message, traffic, error) {
	timer := time.NewTimer(c.cfg.RoundTimeout)
	defer timer.Stop()
	asm := map[int]*Assembler{}
	for _, id := range chosen {
		asm[id] = NewAssembler(k, r, uint32(id), sh)
		if k == KindUpdate {
			asm[id].Recycle(c.spare[id])
		}
	}
	got := map[int]*Message{}
	var tr traffic
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for open := len(chosen); open > 0; {
		select {
		case <-tick.C:
			if n := c.nc.Stats().Reconnects; n != c.reconnects && k == KindUpdate {
				// Frames may have been lost while the server was away:
				// the sites that have not answered get the atoms again.
				c.reconnects = n
				var waiting []int
				for _, id := range chosen {
					if got[id] == nil && asm[id] != nil && asm[id].Message() == nil {
						waiting = append(waiting, id)
					}
				}
				c.cfg.Log("round %d: reconnected to the NATS server; sending the atoms again to %d sites", r, len(waiting))
				tr.resent += c.sendRound(r, c.reach(ctx, waiting))
			}
		case m := <-c.ups:
			tr.in += int64(len(m.Data))
			id, done := c.frame(k, r, m, asm)
			if done {
				got[id] = asm[id].Message()
			}
			if id >= 0 && (done || asm[id] == nil) {
				open--
			}
		case m := <-c.joins:
			c.join(m)
		case <-c.acks:
		case <-timer.C:
			for _, id := range chosen {
				if got[id] == nil && asm[id] != nil {
					c.cfg.Log("round %d: site %s missed the round (no %v within %v)", r, c.sites[id].Name, k, c.cfg.RoundTimeout)
				}
			}
			return got, tr, nil
		case <-ctx.Done():
			return nil, tr, ctx.Err()
		}
	}
	return got, tr, nil
}

// frame handles one frame of round r's messages of kind k. It returns the
// site whose message the frame completed or failed (whose assembler it
// then removes), else -1. A frame counts only for the site named by its
// subject: one that claims another site's id is dropped.
func (c *coordinator) frame(k Kind, r uint32, m *nats.Msg, asm map[int]*Assembler) (int, bool) {
	h, data, err := ParseFrame(m.Data)
	if err != nil {
		c.cfg.Log("round %d: rejected a frame: %v", r, err)
		return -1, false
	}
	id := int(h.Client)
	if from, ok := c.byName[siteOf(upSubject(c.cfg.Subject, ""), m.Subject)]; !ok || from != id {
		c.cfg.Log("round %d: rejected a frame on %s claiming site id %d", r, m.Subject, id)
		return -1, false
	}
	a := asm[id]
	if h.Kind != k || h.Round != r || a == nil || a.Message() != nil {
		return -1, false // late, early, repeated or not ours
	}
	done, err := a.Add(h, data)
	if err != nil {
		c.cfg.Log("round %d: site %s: rejected its %v: %v", r, c.sites[id].Name, k, err)
		asm[id] = nil
		return id, false
	}
	return id, done
}

// ids returns the ids of every site, in order.
func (c *coordinator) ids() []int {
	ids := make([]int, len(c.sites))
	for id := range ids {
		ids[id] = id
	}
	return ids
}

// final sends the final atoms to every site and waits, at most
// Config.RoundTimeout, for their acknowledgements, which it counts.
func (c *coordinator) final(ctx context.Context) (int, error) {
	r := uint32(c.cfg.Rounds)
	if _, err := c.sendAll(KindFinal, r, c.ids(), func(int) uint64 { return 0 }); err != nil {
		c.cfg.Log("final atoms: %v", err)
	}
	timer := time.NewTimer(c.cfg.RoundTimeout)
	defer timer.Stop()
	acked := map[int]bool{}
	for len(acked) < len(c.sites) {
		select {
		case m := <-c.acks:
			var a ack
			from, ok := c.byName[siteOf(ackSubject(c.cfg.Subject, ""), m.Subject)]
			if err := decodeControl(m.Data, &a); err != nil || a.Round != r || !ok || a.ID != from {
				continue
			}
			acked[a.ID] = true
		case m := <-c.joins:
			c.join(m)
		case <-c.ups:
		case <-timer.C:
			return len(acked), nil
		case <-ctx.Done():
			return len(acked), ctx.Err()
		}
	}
	return len(acked), nil
}
