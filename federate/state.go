package federate

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
)

// The coordinator's state lives in a JetStream object store (a stream
// underneath) named by Config.State, as one object named by the subject
// prefix, replaced after the atoms start and after every completed round:
//
//	offset  size  field
//	     0     8  magic "DDLSTATE"
//	     8     4  length L of the JSON description (savedState)
//	    12     L  the description: round, settings, sites, scaling
//	  12+L     …  the atoms' values, float64 little-endian (Pack's order),
//	              then the server optimiser's moments m and v, as many
//	              values each, when it keeps them (savedState.Moments),
//	              then the sites' mean second moments, as many values,
//	              when there are any (savedState.SiteMoments)
//
// An object is written whole or not at all, so a restarted coordinator
// finds the atoms of exactly one completed round.
const stateMagic = "DDLSTATE"

// validBucket matches the names JetStream accepts for an object store.
var validBucket = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// savedState describes a saved coordinator: the federation as formed and
// the last completed round (0: the atoms started, no round yet).
type savedState struct {
	Version      int                 `json:"version"`
	Round        int                 `json:"round"`
	Sites        int                 `json:"sites"`
	Seed         uint64              `json:"seed"`
	LocalEpochs  int                 `json:"local_epochs"`
	Fraction     float64             `json:"fraction"`
	Aggregation  string              `json:"aggregation"`
	SourceLogits bool                `json:"source_logits,omitempty"`
	Server       string              `json:"server,omitempty"`
	Moments      int                 `json:"moments,omitempty"`
	ShareMoments bool                `json:"share_moments,omitempty"`
	SiteMoments  bool                `json:"site_moments,omitempty"`
	Members      []hello             `json:"members"`
	Labels       []int               `json:"labels"`
	Shape        Shape               `json:"shape"`
	Settings     dictionary.Settings `json:"settings"`
	Offset       []float64           `json:"offset,omitempty"`
	Scale        []float64           `json:"scale,omitempty"`
}

// stateStore saves and loads a coordinator's state.
type stateStore struct {
	obs   jetstream.ObjectStore
	name  string
	chunk uint32 // bytes of the object's chunks: they fit the server's maximal payload
}

// openState opens (creating it if needed) the object store bucket on the
// JetStream of nc's server.
func openState(ctx context.Context, nc *nats.Conn, bucket, name string) (*stateStore, error) {
	if !validBucket.MatchString(bucket) {
		return nil, protocolErr("state bucket %q: want 1 to 64 letters, digits, '-' or '_'", bucket)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("federate: JetStream: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	obs, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: bucket, Storage: jetstream.FileStorage,
		Description: "dadil federate: coordinators' atoms and last completed round"})
	if err != nil {
		return nil, fmt.Errorf("federate: state bucket %s (does the NATS server run JetStream?): %w", bucket, err)
	}
	return &stateStore{obs: obs, name: name, chunk: uint32(min(128<<10, max(nc.MaxPayload()-1024, 1024)))}, nil
}

// encodeState returns the object of the state s with the values: the
// atoms, then the server optimiser's moments.
func encodeState(s *savedState, values ...[]float64) []byte {
	meta, _ := json.Marshal(s) // plain data: cannot fail
	n := 0
	for _, v := range values {
		n += len(v)
	}
	b := make([]byte, 12+len(meta)+8*n)
	copy(b, stateMagic)
	binary.LittleEndian.PutUint32(b[8:], uint32(len(meta)))
	copy(b[12:], meta)
	at := 12 + len(meta)
	for _, vs := range values {
		for _, v := range vs {
			binary.LittleEndian.PutUint64(b[at:], math.Float64bits(v))
			at += 8
		}
	}
	return b
}

// save replaces the saved state by s and the values (the atoms, then the
// server optimiser's moments).
func (st *stateStore) save(ctx context.Context, s *savedState, values ...[]float64) error {
	b := encodeState(s, values...)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	meta := jetstream.ObjectMeta{Name: st.name, Opts: &jetstream.ObjectMetaOptions{ChunkSize: st.chunk}}
	if _, err := st.obs.Put(ctx, meta, bytes.NewReader(b)); err != nil {
		return fmt.Errorf("federate: save the state of round %d: %w", s.Round, err)
	}
	return nil
}

// load returns the saved state and values (the atoms, then the server
// optimiser's moments), or nil if there are none.
func (st *stateStore) load(ctx context.Context) (*savedState, []float64, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	b, err := st.obs.GetBytes(ctx, st.name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("federate: load the state %s: %w", st.name, err)
	}
	return parseState(b)
}

// parseState decodes a saved state and checks it: the format, the atoms'
// shape and values, the sites. It returns the atoms' values followed by
// the server optimiser's savedState.Moments vectors of as many values and
// the sites' mean second moments if savedState.SiteMoments.
func parseState(b []byte) (*savedState, []float64, error) {
	bad := func(f string, a ...any) error { return protocolErr("saved state: "+f, a...) }
	if len(b) < 12 || string(b[:8]) != stateMagic {
		return nil, nil, bad("not a dadil coordinator's state")
	}
	n := int(binary.LittleEndian.Uint32(b[8:]))
	if n > len(b)-12 {
		return nil, nil, bad("description of %d bytes in %d", n, len(b))
	}
	var s savedState
	dec := json.NewDecoder(bytes.NewReader(b[12 : 12+n]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, nil, bad("%v", err)
	}
	v, err := s.Shape.Values()
	if err != nil {
		return nil, nil, bad("%v", err)
	}
	switch {
	case s.Version != Version:
		return nil, nil, bad("version %d (this program writes %d)", s.Version, Version)
	case s.Moments < 0 || s.Moments > 2:
		return nil, nil, bad("%d moment vectors of the server optimiser (at most 2)", s.Moments)
	case s.SiteMoments && !s.ShareMoments:
		return nil, nil, bad("the sites' second moments without shared moments")
	case len(b)-12-n != 8*v*(1+s.Moments+s.siteMoments()):
		return nil, nil, bad("%d bytes of atoms and %d moment vectors for shape %v", len(b)-12-n, s.Moments+s.siteMoments(), s.Shape)
	case len(s.Members) != s.Sites || s.Round < 0:
		return nil, nil, bad("%d sites of %d, round %d", len(s.Members), s.Sites, s.Round)
	case len(s.Offset) != len(s.Scale) || (s.Offset != nil && len(s.Offset) != s.Shape.D):
		return nil, nil, bad("a scaling of %d offsets and %d factors", len(s.Offset), len(s.Scale))
	}
	atoms := make([]float64, v*(1+s.Moments+s.siteMoments()))
	for i := range atoms {
		atoms[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[12+n+8*i:]))
		if math.IsNaN(atoms[i]) || math.IsInf(atoms[i], 0) {
			return nil, nil, bad("value %d is %g", i, atoms[i])
		}
	}
	if s.SiteMoments {
		if err := checkMoments(atoms[v*(1+s.Moments):]); err != nil {
			return nil, nil, bad("the sites' %v", err)
		}
	}
	return &s, atoms, nil
}

// siteMoments counts the vectors of the sites' second moments saved: 0 or 1.
func (s *savedState) siteMoments() int {
	if s.SiteMoments {
		return 1
	}
	return 0
}

// snapshot returns the coordinator's state after round r.
func (c *coordinator) snapshot(r int) *savedState {
	s := &savedState{Version: Version, Round: r, Sites: c.cfg.Sites, Seed: c.cfg.Seed, LocalEpochs: c.cfg.LocalEpochs,
		Fraction: c.cfg.Fraction, Aggregation: c.cfg.Aggregation.String(), SourceLogits: c.cfg.SourceLogits, Labels: c.labels, Shape: c.shape, Settings: c.local,
		Server: c.cfg.Server.resolved().describe(), Moments: c.cfg.Server.moments(), ShareMoments: c.cfg.ShareMoments, SiteMoments: c.moments != nil}
	for _, m := range c.sites {
		s.Members = append(s.Members, m.hello)
	}
	if c.scaler != nil {
		s.Offset, s.Scale = c.scaler.Offset, c.scaler.Scale
	}
	return s
}

// resume takes up a saved state: the sites, the classes, the shape, the
// settings, the scaling, the atoms and the server optimiser's moments
// (values holds the atoms, then the moments). The saved federation must
// be the configured one (sites, seed, local epochs, fraction,
// aggregation, source logits, server optimiser) and must not have run
// more rounds than configured.
func (c *coordinator) resume(s *savedState, values []float64) error {
	cfg := &c.cfg
	srv := cfg.Server.resolved()
	switch {
	case s.Server != srv.describe() || s.Moments != srv.moments():
		return protocolErr("the saved state %s has the server optimiser %q (%d moment vectors), this coordinator %q", cfg.Subject, s.Server, s.Moments, srv.describe())
	case s.Sites != cfg.Sites || s.Seed != cfg.Seed || s.LocalEpochs != cfg.LocalEpochs || s.Fraction != cfg.Fraction || s.Aggregation != cfg.Aggregation.String():
		return protocolErr("the saved state %s is of another federation (%d sites, seed %d, %d local epochs, C = %g, %s), not of this one (%d, %d, %d, %g, %v)",
			cfg.Subject, s.Sites, s.Seed, s.LocalEpochs, s.Fraction, s.Aggregation, cfg.Sites, cfg.Seed, cfg.LocalEpochs, cfg.Fraction, cfg.Aggregation)
	case s.SourceLogits != cfg.SourceLogits:
		return protocolErr("the saved state %s averages the label logits over %s, this coordinator over %s", cfg.Subject, logitsMean(s.SourceLogits), logitsMean(cfg.SourceLogits))
	case s.ShareMoments != cfg.ShareMoments:
		return protocolErr("the saved state %s has shared second moments %v, this coordinator %v", cfg.Subject, s.ShareMoments, cfg.ShareMoments)
	case (s.Offset != nil) != (cfg.Scaling != dataset.ScaleNone):
		return protocolErr("the saved state %s was scaled %v, not %v", cfg.Subject, map[bool]string{true: "minmax", false: "none"}[s.Offset != nil], cfg.Scaling)
	case s.Round > cfg.Rounds:
		return protocolErr("the saved state %s has run %d rounds, more than the %d asked", cfg.Subject, s.Round, cfg.Rounds)
	}
	for id, h := range s.Members {
		if err := h.check(cfg.Subject); err != nil {
			return protocolErr("saved state: %v", err)
		}
		c.sites = append(c.sites, &site{hello: h})
		c.byName[h.Name] = id
	}
	agg, err := newAggregator(cfg.Aggregation, cfg.Server, s.Shape, cfg.SourceLogits)
	if err != nil {
		return err
	}
	v := len(values) / (1 + s.Moments + s.siteMoments())
	for i := range agg.mom {
		copy(agg.mom[i], values[(i+1)*v:(i+2)*v])
	}
	if s.SiteMoments {
		c.moments = values[(1+s.Moments)*v:]
	}
	c.labels, c.shape, c.local, c.atoms, c.agg, c.started = s.Labels, s.Shape, s.Settings, values[:v:v], agg, true
	c.local.Epochs = cfg.LocalEpochs
	if s.Offset != nil {
		c.scaler = &dataset.Scaler{Kind: dataset.ScaleMinMax, Offset: s.Offset, Scale: s.Scale}
	}
	return nil
}

// logitsMean names the sites the label logits are averaged over.
func logitsMean(sourceLogits bool) string {
	if sourceLogits {
		return "the sources"
	}
	return "all sites"
}
