package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"os/signal"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/dadil/dadil/classify"
	"github.com/dadil/dadil/dataset"
	"github.com/dadil/dadil/dictionary"
	"github.com/dadil/dadil/federate"
	"github.com/dadil/dadil/internal/atomicfile"
	"github.com/dadil/dadil/internal/clip"
)

// tokenEnv names the environment variable that holds the federation's
// token when --token is not given.
const tokenEnv = "DADIL_FEDERATE_TOKEN"

// natsFlags are the connection flags of dadil federate serve and join.
type natsFlags struct {
	url, token, subject, nkey, creds string
	tls                              federate.TLSFiles
}

func (n *natsFlags) register(fs *flag.FlagSet, urlUsage, def string) {
	fs.StringVar(&n.url, "nats", def, urlUsage)
	fs.StringVar(&n.token, "token", "", "the federation's shared credential `T` (default: $"+tokenEnv+")")
	fs.StringVar(&n.subject, "subject", federate.DefaultSubject, "`PREFIX` of the federation's NATS subjects")
}

// registerClient registers the credentials of a client, of join and of
// serve on an existing server, and for join its TLS files (serve's are
// embeddedFlags').
func (n *natsFlags) registerClient(fs *flag.FlagSet, who string, withTLS bool) {
	fs.StringVar(&n.nkey, "nkey", "", "`FILE` holding "+who+"'s NKey seed (dadil federate keys), instead of a token")
	fs.StringVar(&n.creds, "creds", "", "NATS user credentials `FILE` (user JWT and seed), instead of a token")
	if !withTLS {
		return
	}
	fs.StringVar(&n.tls.CA, "tls-ca", "", "connect with TLS, verifying the server's certificate with this CA `FILE` (PEM)")
	fs.StringVar(&n.tls.Cert, "tls-cert", "", "client certificate `FILE` (PEM) for a server that asks for one")
	fs.StringVar(&n.tls.Key, "tls-key", "", "`FILE` of the client certificate's private key (PEM)")
}

// options returns the connection options of a client named name; the
// token comes from the environment when no other credential is given.
func (n *natsFlags) options(name string) (federate.ConnOptions, error) {
	if n.token == "" && n.nkey == "" && n.creds == "" {
		n.token = os.Getenv(tokenEnv)
	}
	given := 0
	for _, f := range []string{n.token, n.nkey, n.creds} {
		if f != "" {
			given++
		}
	}
	if given > 1 {
		return federate.ConnOptions{}, usageError{errors.New("--token, --nkey and --creds: give one credential")}
	}
	if (n.tls.Cert == "") != (n.tls.Key == "") {
		return federate.ConnOptions{}, usageError{errors.New("--tls-cert and --tls-key go together")}
	}
	return federate.ConnOptions{Name: name, Token: n.token, NKeyFile: n.nkey, CredsFile: n.creds, TLS: n.tls, Subject: n.subject}, nil
}

// roundFlags are the coordinator's settings, shared by serve and demo.
type roundFlags struct {
	rounds, epochs            int
	fraction                  float64
	aggregation, scale, start string
	serverOpt                 string
	serverLR, serverBeta1     float64
	keepState, weigh          bool
	sourceLogits, share       bool
	roundTimeout, joinTimeout time.Duration
	seed                      uint64
	atoms, samples, batch     int
	lr                        float64
}

func (r *roundFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&r.rounds, "rounds", 20, "number of rounds")
	fs.IntVar(&r.epochs, "local-epochs", 5, "epochs of DaDiL every chosen site runs per round")
	fs.Float64Var(&r.fraction, "fraction", 1, "fraction `C` of the sites chosen every round (0 < C ≤ 1)")
	fs.StringVar(&r.aggregation, "aggregation", "avg", "`avg` (element-wise mean of the atoms), wbary (mean of the atoms' points matched by optimal assignment to the round's) or random (one site's atoms; with --server-optimizer sgd, --keep-local-state=false and --weigh-moves=false unless given)")
	fs.StringVar(&r.serverOpt, "server-optimizer", "sgd", "the coordinator's step on the sites' mean move Δ: `sgd` (x + η_s·Δ; η_s = 1 is plain FedAvg), momentum (FedAvgM) or adam (FedAdam)")
	fs.Float64Var(&r.serverLR, "server-lr", 0, "server learning rate `η_s` (default 1 for sgd and momentum, 0.01 for adam)")
	fs.BoolVar(&r.keepState, "keep-local-state", true, "sites keep their Adam moments from round to round (false: afresh every round)")
	fs.BoolVar(&r.share, "share-moments", false, "sites divide their gradients by the same Adam second moments, the mean of theirs, sent with the atoms, as the centralised fit's one Adam does (doubles the bytes; needs --keep-local-state; --weigh-moves and --source-logits default to false with it)")
	fs.BoolVar(&r.weigh, "weigh-moves", true, "every site scales its move of atom k by K·α_k before sending it, so that a domain pulls an atom in proportion to its weight, as in the centralised fit (false: the moves as they are; false unless given with --share-moments)")
	fs.BoolVar(&r.sourceLogits, "source-logits", true, "avg and wbary take the atoms' label logits as the mean of the answering sources' alone, whose loss moves them (false: the mean of all the sites, the target's unchanged logits too; false unless given with --share-moments)")
	fs.Float64Var(&r.serverBeta1, "server-beta1", 0, "server momentum `β₁` (default 0.5 for momentum, 0.9 for adam)")
	fs.StringVar(&r.scale, "scale", "minmax", "feature scaling every site applies: `minmax` (over all sites, from each site's per-feature minimum and maximum) or none")
	fs.StringVar(&r.start, "start", "summary", "atoms' start: `summary` (drawn from the sources' per-class feature means and deviations) or gaussian (N(0, I), no statistic leaves a site)")
	fs.DurationVar(&r.roundTimeout, "round-timeout", time.Minute, "a chosen site that has not answered within this time misses the round")
	fs.DurationVar(&r.joinTimeout, "join-timeout", 10*time.Minute, "how long to wait for the sites to join")
	fs.Uint64Var(&r.seed, "seed", 1, "random seed (atoms, choice of sites, local updates)")
	fs.IntVar(&r.atoms, "atoms", 0, "number of atoms `K` (default: the number of sources)")
	fs.IntVar(&r.samples, "samples", 0, "support size `n` of every atom (default 100 per class)")
	fs.IntVar(&r.batch, "batch", 0, "mini-batch size `n_b` (default 20 per class)")
	fs.Float64Var(&r.lr, "lr", 0.1, "Adam learning rate `η` (for the features, scaled by each site's spread)")
}

// config checks the flags and returns the coordinator's configuration.
func (r *roundFlags) config(fs *flag.FlagSet) (federate.Config, error) {
	var cfg federate.Config
	agg, err := federate.ParseAggregation(r.aggregation)
	if err != nil {
		return cfg, usageError{err}
	}
	start, err := federate.ParseStart(r.start)
	if err != nil {
		return cfg, usageError{err}
	}
	opt, err := federate.ParseServerOptimizer(r.serverOpt)
	if err != nil {
		return cfg, usageError{err}
	}
	sites, err := r.siteOptions(fs, agg)
	if err != nil {
		return cfg, err
	}
	if agg == federate.Random && !flagSet(fs, "server-optimizer") {
		// One site's atoms a round is a baseline: the paper's, unless
		// asked otherwise (siteOptions). sgd is the default of every
		// aggregation; the check keeps random's whole setting in one
		// place.
		opt = federate.ServerSGD
	}
	scale, err := dataset.ParseScaling(r.scale)
	if err != nil || scale == dataset.ScaleStandard {
		return cfg, usageError{fmt.Errorf("--scale %s: want minmax or none", clip.Quote(r.scale))}
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"rounds", r.rounds}, {"local-epochs", r.epochs}} {
		if c.v < 1 {
			return cfg, usageError{fmt.Errorf("--%s %d: need a positive number", c.name, c.v)}
		}
	}
	for _, c := range []struct {
		name, def string
		v         int
	}{{"atoms", "the number of sources", r.atoms}, {"samples", "100 per class", r.samples}, {"batch", "20 per class", r.batch}} {
		if err := countFlag(fs, c.name, c.v, c.def); err != nil {
			return cfg, err
		}
	}
	switch {
	case !(r.fraction > 0 && r.fraction <= 1):
		return cfg, usageError{fmt.Errorf("--fraction %g: want 0 < C ≤ 1", r.fraction)}
	case r.roundTimeout <= 0 || r.joinTimeout <= 0:
		return cfg, usageError{errors.New("--round-timeout and --join-timeout must be positive")}
	case !(r.lr > 0) || math.IsInf(r.lr, 0):
		return cfg, usageError{fmt.Errorf("--lr %g: the learning rate must be positive", r.lr)}
	case !(r.serverLR >= 0) || math.IsInf(r.serverLR, 0):
		return cfg, usageError{fmt.Errorf("--server-lr %g: want a positive number (0: the default)", r.serverLR)}
	case !(r.serverBeta1 >= 0 && r.serverBeta1 < 1):
		return cfg, usageError{fmt.Errorf("--server-beta1 %g: want 0 ≤ β₁ < 1 (0: the default)", r.serverBeta1)}
	}
	return federate.Config{
		Rounds: r.rounds, LocalEpochs: r.epochs, Fraction: r.fraction, Aggregation: agg,
		Server: federate.Server{Optimizer: opt, LR: r.serverLR, Beta1: r.serverBeta1}, KeepLocalState: sites.keep, WeighMoves: sites.weigh,
		SourceLogits: sites.sourceLogits, ShareMoments: sites.share,
		RoundTimeout: r.roundTimeout, JoinTimeout: r.joinTimeout, Seed: r.seed, Start: start, Scaling: scale,
		Settings: dictionary.Settings{Atoms: r.atoms, Samples: r.samples, Batch: r.batch, LearningRate: r.lr},
	}, nil
}

// siteOptions are the options of the sites' updates and their means.
type siteOptions struct{ keep, weigh, share, sourceLogits bool }

// siteOptions resolves --keep-local-state, --weigh-moves, --share-moments
// and --source-logits, each given or defaulted by the others.
func (r *roundFlags) siteOptions(fs *flag.FlagSet, agg federate.Aggregation) (siteOptions, error) {
	o := siteOptions{r.keepState, r.weigh, r.share, r.sourceLogits}
	given := func(name string) bool { return flagSet(fs, name) }
	if agg == federate.Random {
		// The paper's setting unless asked otherwise: momentum over moves
		// towards a different site every round, with the sites' own
		// moments kept, diverges.
		o.keep = o.keep && given("keep-local-state")
		o.weigh = o.weigh && given("weigh-moves")
	}
	if !o.share {
		return o, nil
	}
	// The shared moments leave α's factor in the moves and balance the
	// sites' pulls as the centralised fit does (federate's moments.go):
	// weighing and the sources' logits mean are off unless asked for.
	o.weigh = o.weigh && given("weigh-moves")
	o.sourceLogits = o.sourceLogits && given("source-logits")
	if !o.keep || o.weigh {
		return o, usageError{errors.New("--share-moments needs --keep-local-state and --weigh-moves=false")}
	}
	return o, nil
}

// roundLine is the coordinator's progress line of a round.
func roundLine(st federate.RoundStats) string {
	return fmt.Sprintf("round %d/%d: %d of %d sites answered, loss %.4g, %s out, %s in, %.2f s",
		st.Round, st.Rounds, len(st.Answered), len(st.Chosen), st.Loss, byteSize(st.BytesOut), byteSize(st.BytesIn), st.Elapsed.Seconds())
}

// byteSize formats a number of bytes.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// serveReport is the JSON line dadil federate serve prints at the end.
type serveReport struct {
	Sites        []string      `json:"sites"`
	Labels       []int         `json:"labels"`
	Rounds       []roundReport `json:"rounds"`
	Acknowledged int           `json:"acknowledged"`
	Seconds      float64       `json:"seconds"`
	FirstRound   int           `json:"first_round"`
	Summarized   []int         `json:"summarized"`
	SummaryBytes int64         `json:"summary_bytes"`
}

type roundReport struct {
	Round    int      `json:"round"`
	Chosen   []int    `json:"chosen"`
	Answered []int    `json:"answered"`
	Loss     *float64 `json:"loss"`
	BytesOut int64    `json:"bytes_out"`
	BytesIn  int64    `json:"bytes_in"`
	Seconds  float64  `json:"seconds"`
}

func newServeReport(res *federate.Result, elapsed time.Duration) serveReport {
	r := serveReport{Sites: res.Sites, Labels: res.Labels, Acknowledged: res.Acknowledged, Seconds: elapsed.Seconds(),
		FirstRound: res.FirstRound, Summarized: res.Summarized, SummaryBytes: res.SummaryBytes}
	for _, st := range res.Rounds {
		rr := roundReport{Round: st.Round, Chosen: st.Chosen, Answered: st.Answered, BytesOut: st.BytesOut, BytesIn: st.BytesIn, Seconds: st.Elapsed.Seconds()}
		if !math.IsNaN(st.Loss) {
			l := st.Loss
			rr.Loss = &l
		}
		r.Rounds = append(r.Rounds, rr)
	}
	return r
}

// runFederateServe is dadil federate serve.
func runFederateServe(args []string, e *env) error {
	fs := newFlags("dadil federate serve", e)
	var nf natsFlags
	var rf roundFlags
	var sites int
	var listen, report, stateDir, bucket string
	var maxPayload int
	var emb embeddedFlags
	nf.register(fs, "`URL` of an existing NATS server or cluster (default: start one in this process on --listen)", "")
	nf.registerClient(fs, "the coordinator (with --nats)", false)
	emb.register(fs)
	rf.register(fs)
	fs.IntVar(&sites, "sites", 0, "number of sites that must join before round 1 (required)")
	fs.StringVar(&listen, "listen", "127.0.0.1:4222", "`HOST:PORT` of the embedded NATS server (port 0: any free port)")
	fs.IntVar(&maxPayload, "max-payload", 0, "largest NATS message of the embedded server, in `bytes` (default 1 MiB); atoms are sent in frames of this size")
	fs.StringVar(&report, "report", "", "also write the JSON report to `FILE`")
	fs.StringVar(&stateDir, "state", "", "keep the coordinator's state in the embedded server's JetStream, stored in `DIR`: a serve restarted with the same --state and --subject resumes after the last completed round")
	fs.StringVar(&bucket, "state-bucket", "", "JetStream object store `NAME` of the state (default dadil-federate with --state; with --nats, giving it keeps the state on that server)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil federate serve --sites N [--nats URL | --listen HOST:PORT] [--token T | --site-keys FILE] [--state DIR] [flags]")
		fmt.Fprintln(fs.Output(), "\nCoordinates federated DaDiL: waits for N sites (dadil federate join), runs the rounds")
		fmt.Fprintln(fs.Output(), "and sends the final atoms. Without --nats it starts a NATS server in this process that")
		fmt.Fprintln(fs.Output(), "admits only clients with the token (a random one, printed, unless given), or with")
		fmt.Fprintln(fs.Output(), "--site-keys only the sites holding these NKeys, each speaking only for itself; with")
		fmt.Fprintln(fs.Output(), "--tls-cert and --tls-key it speaks TLS (and with --tls-ca it asks for client certificates).")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := rf.config(fs)
	if err != nil {
		return err
	}
	if sites < 1 {
		return usageError{fmt.Errorf("--sites %d: give the number of sites that will join", sites)}
	}
	if err := checkMaxPayload(maxPayload); err != nil {
		return err
	}
	cfg.Sites, cfg.Subject, cfg.State = sites, nf.subject, bucket
	if stateDir != "" && nf.url != "" {
		return usageError{errors.New("--state: the state of a coordinator on an existing server (--nats) goes to its JetStream with --state-bucket NAME")}
	}
	if stateDir != "" && bucket == "" {
		cfg.State = "dadil-federate"
	}
	co, err := serveConn(e, &nf, &emb, listen, maxPayload, stateDir)
	if err != nil {
		return err
	}
	nc, err := federate.Dial(nf.url, co)
	if err != nil {
		return err
	}
	defer nc.Close()
	cfg.Log = func(format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		if federateLogHook != nil {
			federateLogHook(msg)
		}
		fmt.Fprintln(e.stderr, msg)
	}
	cfg.Progress = func(st federate.RoundStats) { fmt.Fprintln(e.stderr, roundLine(st)) }
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	res, err := federate.Serve(ctx, nc, cfg)
	if err != nil {
		return err
	}
	if res.FirstRound > 1 {
		fmt.Fprintf(e.stderr, "resumed at round %d from the saved state\n", res.FirstRound)
	}
	fmt.Fprintf(e.stderr, "final atoms acknowledged by %d of %d sites\n", res.Acknowledged, len(res.Sites))
	return writeJSONReport(e, report, newServeReport(res, time.Since(start)))
}

// checkMaxPayload checks --max-payload of the embedded server: 0 (the
// default) or room for a frame's header and one value, up to 64 MiB.
func checkMaxPayload(n int) error {
	if n < 0 || n > 64<<20 || (n > 0 && n < federate.HeaderSize+8) {
		return usageError{fmt.Errorf("--max-payload %d: want %d … %d bytes, or 0 for the default", n, federate.HeaderSize+8, 64<<20)}
	}
	return nil
}

// embeddedFlags are the credentials and TLS files of serve's embedded
// server.
type embeddedFlags struct {
	siteKeys string
	tls      federate.TLSFiles
}

func (f *embeddedFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.siteKeys, "site-keys", "", "`FILE` of the sites' public NKeys, one \"NAME KEY\" a line (dadil federate keys): the embedded server admits only these sites, each speaking only for itself, instead of a token")
	fs.StringVar(&f.tls.Cert, "tls-cert", "", "the embedded server's TLS certificate `FILE` (PEM): clients must connect with TLS (with --nats: the coordinator's client certificate)")
	fs.StringVar(&f.tls.Key, "tls-key", "", "`FILE` of the --tls-cert certificate's private key (PEM)")
	fs.StringVar(&f.tls.CA, "tls-ca", "", "CA `FILE` (PEM): with --tls-cert, every client must present a certificate it signed (with --nats: connect with TLS, verifying the server's certificate with it)")
}

// serveConn returns the options of the coordinator's connection: to the
// embedded server it starts (in process), or to the server of --nats.
func serveConn(e *env, nf *natsFlags, emb *embeddedFlags, listen string, maxPayload int, stateDir string) (federate.ConnOptions, error) {
	if nf.url != "" {
		if emb.siteKeys != "" {
			return federate.ConnOptions{}, usageError{errors.New("--site-keys configures the embedded server: an existing server (--nats) has its own users (the coordinator connects with --token, --nkey or --creds)")}
		}
		nf.tls = emb.tls
		return nf.options("dadil federate serve")
	}
	if nf.nkey != "" || nf.creds != "" {
		return federate.ConnOptions{}, usageError{errors.New("--nkey and --creds connect to an existing server (--nats); the embedded server takes --token or --site-keys")}
	}
	srv, co, err := startEmbedded(e, nf, emb, listen, maxPayload, stateDir)
	if err != nil {
		return co, err
	}
	nf.url, co.InProcess = srv.ClientURL(), srv
	return co, nil
}

// startEmbedded starts the embedded NATS server on listen, with the
// sites' NKeys or the token of nf (a random one, printed, if none), and
// returns it with the options of the coordinator's connection. The server
// stops with the process.
func startEmbedded(e *env, nf *natsFlags, emb *embeddedFlags, listen string, maxPayload int, stateDir string) (*server.Server, federate.ConnOptions, error) {
	co := federate.ConnOptions{Name: "dadil federate serve"}
	host, port, err := net.SplitHostPort(listen)
	p, perr := strconv.Atoi(port)
	if err != nil || perr != nil || p < 0 || p > 65535 {
		return nil, co, usageError{fmt.Errorf("--listen %s: want HOST:PORT", clip.Quote(listen))}
	}
	sc := federate.ServerConfig{Host: host, Port: p, Subject: nf.subject, TLS: emb.tls, MaxPayload: int32(maxPayload), StoreDir: stateDir}
	if (emb.tls.Cert == "") != (emb.tls.Key == "") || (emb.tls.CA != "" && emb.tls.Cert == "") {
		return nil, co, usageError{errors.New("--tls-cert and --tls-key go together, and --tls-ca needs them")}
	}
	switch {
	case emb.siteKeys != "" && nf.token != "":
		return nil, co, usageError{errors.New("--site-keys and --token: give one credential")}
	case emb.siteKeys != "":
		if sc.Sites, err = federate.ReadSiteKeys(emb.siteKeys); err != nil {
			return nil, co, err
		}
		// The coordinator's own key lives only in this process.
		if co.NKeySeed, sc.Coordinator, err = federate.NewKey(); err != nil {
			return nil, co, err
		}
	default:
		if nf.token == "" {
			nf.token = os.Getenv(tokenEnv)
		}
		if nf.token == "" {
			b := make([]byte, 16)
			rand.Read(b)
			nf.token = hex.EncodeToString(b)
			fmt.Fprintf(e.stderr, "token: %s (give it to the sites with --token or $%s)\n", nf.token, tokenEnv)
		}
		sc.Token, co.Token = nf.token, nf.token
	}
	srv, err := federate.StartServer(sc)
	if err != nil {
		return nil, co, err
	}
	what := "a token"
	if sc.Sites != nil {
		what = fmt.Sprintf("the NKeys of %d sites", len(sc.Sites))
	}
	if sc.TLS.Cert != "" {
		what += ", TLS"
	}
	fmt.Fprintf(e.stderr, "NATS server listening on %s (%s)\n", srv.ClientURL(), what)
	return srv, co, nil
}

// writeJSONReport prints v as one JSON line on stdout and, if path is not
// "", writes it to path.
func writeJSONReport(e *env, path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, string(b))
	if path == "" {
		return nil
	}
	return atomicfile.Write(path, append(b, '\n'))
}

// federateLogHook, if not nil, sees every remark of a site (tests kill a
// site on its way through a round with it).
var federateLogHook func(msg string)

// joinReport is the JSON line dadil federate join prints at the end.
type joinReport struct {
	Site      string    `json:"site"`
	ID        int       `json:"id"`
	Role      string    `json:"role"`
	Labels    []int     `json:"labels"`
	Trained   []int     `json:"trained"`
	Loss      []float64 `json:"loss"`
	Alpha     []float64 `json:"alpha"`
	AccuracyR *float64  `json:"accuracy_r,omitempty"`
	AccuracyE *float64  `json:"accuracy_e,omitempty"`
}

// runFederateJoin is dadil federate join.
func runFederateJoin(args []string, e *env) error {
	fs := newFlags("dadil federate join", e)
	var jf joinFlags
	jf.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	kind, trainer, err := jf.check()
	if err != nil {
		return err
	}
	co, err := jf.connOptions()
	if err != nil {
		return err
	}
	sc, err := jf.siteConfig(e, kind, trainer)
	if err != nil {
		return err
	}
	nc, err := federate.Dial(jf.nf.url, co)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := federate.Join(ctx, nc, sc)
	if err != nil {
		return err
	}
	return finishJoin(e, res, sc, jf.out, jf.report)
}

// joinFlags are the flags of dadil federate join.
type joinFlags struct {
	nf                                                   natsFlags
	rf                                                   readerFlags
	source, target, name, scale, out, report, classifier string
	workers                                              int
	joinTimeout, idle, connectTimeout                    time.Duration
}

// register registers the flags and the usage of dadil federate join on fs.
func (jf *joinFlags) register(fs *flag.FlagSet) {
	jf.nf.register(fs, "`URL` of the federation's NATS server", "nats://127.0.0.1:4222")
	jf.nf.registerClient(fs, "this site", true)
	fs.DurationVar(&jf.connectTimeout, "connect-timeout", time.Minute, "while no NATS server answers at --nats, try again for this long")
	jf.rf.register(fs)
	fs.StringVar(&jf.source, "source", "", "this site's labeled domain `PATH` (.csv, .npy, .npz or .mat)")
	fs.StringVar(&jf.target, "target", "", "this site's unlabeled target domain `PATH`; its labels, if any, only score")
	fs.StringVar(&jf.name, "name", "", "the site's `NAME` in the federation (default: the file's base name)")
	fs.StringVar(&jf.scale, "scale", "none", "feature scaling of this site's rows alone, before the federation's (serve --scale): `none`, minmax or standard")
	fs.StringVar(&jf.out, "out", "", "the target's predictions (DaDiL-R and DaDiL-E) as CSV to `FILE`")
	fs.StringVar(&jf.report, "report", "", "also write the JSON report to `FILE`")
	fs.StringVar(&jf.classifier, "classifier", defaultClassifier, "the target's final classifier `NAME`")
	fs.IntVar(&jf.workers, "workers", 0, "goroutines of the local updates (0: one per core)")
	fs.DurationVar(&jf.joinTimeout, "join-timeout", 10*time.Minute, "how long to wait for the federation to form")
	fs.DurationVar(&jf.idle, "idle-timeout", 10*time.Minute, "give up when the coordinator sends nothing for this long")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil federate join (--source FILE | --target FILE) [--nats URL] [--token T | --nkey FILE | --creds FILE] [--tls-ca FILE] [--name NAME] [flags]")
		fmt.Fprintln(fs.Output(), "\nJoins a federation as a site: trains on the atoms of every round it is chosen for and")
		fmt.Fprintln(fs.Output(), "sends back only the atoms (and its local loss). Its rows, labels and α stay here. A target")
		fmt.Fprintln(fs.Output(), "classifies its rows at the end with DaDiL-R and DaDiL-E.")
		fs.PrintDefaults()
	}
}

// path is the site's file: --source or --target.
func (jf *joinFlags) path() string { return jf.source + jf.target }

// check checks the flags that need no file, setting the site's name to
// the file's base name when --name is absent, and returns the site's
// scaling and the target's classifier. The federation's features are
// min-max scaled or not scaled: the paper's penalty.
func (jf *joinFlags) check() (dataset.Scaling, classify.Trainer, error) {
	if (jf.source == "") == (jf.target == "") {
		return 0, nil, usageError{errors.New("give exactly one of --source and --target")}
	}
	kind, err := dataset.ParseScaling(jf.scale)
	if err != nil {
		return 0, nil, usageError{err}
	}
	if err := checkWorkers(jf.workers); err != nil {
		return 0, nil, err
	}
	trainer, err := (&dictFlags{classifier: jf.classifier}).trainer(dataset.ScaleMinMax)
	if err != nil {
		return 0, nil, err
	}
	if jf.out != "" && jf.source != "" {
		return 0, nil, usageError{errors.New("--out: only a target site predicts")}
	}
	if jf.name == "" {
		jf.name = siteBase(jf.path())
	}
	if !federate.ValidSiteName(jf.name) {
		return 0, nil, usageError{fmt.Errorf("--name %s: want 1 to 64 printable characters, no space, '.', '*' or '>'", clip.Quote(jf.name))}
	}
	return kind, trainer, nil
}

// connOptions returns the site's options of its connection to the NATS
// server.
func (jf *joinFlags) connOptions() (federate.ConnOptions, error) {
	co, err := jf.nf.options("dadil federate join " + jf.name)
	if err != nil {
		return co, err
	}
	if jf.connectTimeout < 0 {
		return co, usageError{fmt.Errorf("--connect-timeout %v: want a duration ≥ 0", jf.connectTimeout)}
	}
	co.Site, co.ConnectTimeout = jf.name, jf.connectTimeout
	return co, nil
}

// siteConfig reads the site's file, its rows scaled alone by kind, and
// returns the site's configuration, its remarks written to e's stderr
// (and shown to federateLogHook). A source needs labels; a target's, if
// any, only score.
func (jf *joinFlags) siteConfig(e *env, kind dataset.Scaling, trainer classify.Trainer) (federate.SiteConfig, error) {
	path := jf.path()
	f, err := readSite(path, kind, jf.rf.options())
	if err != nil {
		return federate.SiteConfig{}, err
	}
	sc := federate.SiteConfig{Subject: jf.nf.subject, Name: jf.name, Target: jf.target != "", X: f.X, Workers: jf.workers,
		JoinTimeout: jf.joinTimeout, Idle: jf.idle, Classifier: trainer,
		Log: func(format string, a ...any) {
			msg := fmt.Sprintf(format, a...)
			if federateLogHook != nil {
				federateLogHook(msg)
			}
			fmt.Fprintln(e.stderr, msg)
		}}
	if sc.Target {
		sc.TestLabels = f.Labels
	} else if sc.Labels = f.Labels; sc.Labels == nil {
		return federate.SiteConfig{}, fmt.Errorf("%s: a source needs labels (see --label-column, --labels-var)", path)
	}
	return sc, nil
}

// readSite reads a site's file and scales its rows alone.
func readSite(path string, kind dataset.Scaling, opt *dataset.ReadOptions) (*dataset.File, error) {
	f, err := dataset.Read(path, opt)
	if err != nil {
		return nil, err
	}
	r, _ := f.X.Dims()
	for i := range r {
		for q, v := range f.X.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s: row %d, feature %d is missing or not finite (%g); a site does not impute: fill it in first", path, i+1, q+1, v)
			}
		}
	}
	sc, err := dataset.FitScaler(kind, f)
	if err != nil {
		return nil, err
	}
	return sc.TransformFile(f)
}

// finishJoin prints the site's report and writes the target's
// predictions.
func finishJoin(e *env, res *federate.SiteResult, sc federate.SiteConfig, out, report string) error {
	rep := joinReport{Site: sc.Name, ID: res.ID, Role: federate.RoleSource, Labels: res.Labels, Trained: res.Trained, Loss: res.Loss, Alpha: res.Alpha}
	if sc.Target {
		rep.Role = federate.RoleTarget
		if !math.IsNaN(res.AccuracyR) {
			r, en := 100*res.AccuracyR, 100*res.AccuracyE
			rep.AccuracyR, rep.AccuracyE = &r, &en
			fmt.Fprintf(e.stderr, "target accuracy: DaDiL-R %.2f%%, DaDiL-E %.2f%%\n", r, en)
		}
	}
	if out != "" {
		var b bytes.Buffer
		b.WriteString("dadil_r,dadil_e\n")
		for i := range res.PredictR {
			fmt.Fprintf(&b, "%d,%d\n", res.PredictR[i], res.PredictE[i])
		}
		if err := atomicfile.Write(out, b.Bytes()); err != nil {
			return err
		}
	}
	return writeJSONReport(e, report, rep)
}
