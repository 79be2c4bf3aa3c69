package federate

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// ServerConfig configures an embedded NATS server (StartServer).
type ServerConfig struct {
	// Host and Port to listen on; the zero values listen on a free port
	// of the loopback interface 127.0.0.1.
	Host string
	// Port 0 listens on a free port.
	Port int
	// Token is the credential every client must present. Exactly one of
	// Token and Sites must be given.
	Token string
	// Sites, instead of a token, gives every site its own NKey: a client
	// must sign with the seed of one of these public keys (or of
	// Coordinator's), and a site's client may publish and subscribe only
	// on its own subjects under Subject (SitePermissions), so that it
	// cannot speak for another site.
	Sites []SiteKey
	// Coordinator is the public NKey of the coordinator, which may use
	// every subject (and JetStream). Subject is the federation's subject
	// prefix (default DefaultSubject).
	Coordinator, Subject string
	// TLS, when Cert and Key are given, makes every client connection TLS
	// with this certificate; CA, if given, also requires of every client
	// a certificate signed by it.
	TLS TLSFiles
	// MaxPayload bounds a message's payload, in bytes; 0 keeps the
	// server's default (1 MiB). Larger messages of atoms are cut into
	// frames of this size.
	MaxPayload int32
	// MaxPending bounds the bytes the server holds for one client that
	// has not read them yet; 0 selects DefaultMaxPending. A client over
	// it is a slow consumer, which the server disconnects: the
	// coordinator, whose sites send their updates at once, then
	// reconnects and asks for them again, at the cost of the bytes and
	// time of the round.
	MaxPending int64
	// StoreDir, if not empty, enables JetStream with its files in this
	// folder.
	StoreDir string
}

// DefaultMaxPending is ServerConfig.MaxPending's default, 1 GiB: a round's
// updates of Caltech-Office's size (four sites, K = 3 atoms of 1000
// points of 810 values, with their second moments) are 148 MiB, over the
// NATS server's own default of 64 MiB.
const DefaultMaxPending = 1 << 30

// StartServer starts an in-process NATS server (nats-server as a library)
// that refuses every client without the token, or without one of the
// NKeys, and returns it once it accepts connections. Its ClientURL is the
// address to give clients; Shutdown stops it.
func StartServer(cfg ServerConfig) (*server.Server, error) {
	opts := &server.Options{
		Host:       cfg.Host,
		Port:       cfg.Port,
		MaxPayload: cfg.MaxPayload,
		MaxPending: cfg.MaxPending,
		NoLog:      true,
		NoSigs:     true,
		HTTPPort:   0,
	}
	if err := cfg.authorize(opts); err != nil {
		return nil, err
	}
	if err := cfg.TLS.serverTLS(opts); err != nil {
		return nil, err
	}
	if opts.MaxPending == 0 {
		opts.MaxPending = DefaultMaxPending
	}
	if opts.Host == "" {
		opts.Host = "127.0.0.1"
	}
	if opts.Port == 0 {
		opts.Port = server.RANDOM_PORT
	}
	if cfg.StoreDir != "" {
		opts.JetStream, opts.StoreDir = true, cfg.StoreDir
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("federate: NATS server: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("federate: the NATS server on %s:%d did not start", opts.Host, cfg.Port)
	}
	return s, nil
}

// authorize sets the server's credentials: the token, or the sites' and
// the coordinator's NKeys with the sites' permissions.
func (cfg *ServerConfig) authorize(opts *server.Options) error {
	switch {
	case (cfg.Token == "") == (len(cfg.Sites) == 0):
		return errors.New("federate: the embedded server needs a token or the sites' NKeys (one of them)")
	case cfg.Token != "":
		opts.Authorization = cfg.Token
		return nil
	case !nkeys.IsValidPublicUserKey(cfg.Coordinator):
		return fmt.Errorf("federate: the coordinator's NKey %q is not a public user key", cfg.Coordinator)
	}
	subject := cfg.Subject
	if subject == "" {
		subject = DefaultSubject
	}
	if !validPrefix(subject) {
		return protocolErr("subject prefix %q", subject)
	}
	if err := checkSiteKeys(cfg.Sites); err != nil {
		return err
	}
	opts.Nkeys = []*server.NkeyUser{{Nkey: cfg.Coordinator}}
	for _, k := range cfg.Sites {
		opts.Nkeys = append(opts.Nkeys, &server.NkeyUser{Nkey: k.PublicKey, Permissions: SitePermissions(subject, k.Name)})
	}
	return nil
}

// serverTLS sets the server's TLS configuration from the files, if any.
func (f TLSFiles) serverTLS(opts *server.Options) error {
	switch {
	case f == TLSFiles{}:
		return nil
	case f.Cert == "" || f.Key == "":
		return errors.New("federate: the server's TLS needs a certificate and its key")
	}
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: f.Cert, KeyFile: f.Key, CaFile: f.CA, Verify: f.CA != ""})
	if err != nil {
		return fmt.Errorf("federate: TLS: %w", err)
	}
	opts.TLSConfig, opts.TLSVerify, opts.TLSTimeout = tc, f.CA != "", 5
	return nil
}

// SitePermissions returns what a site's credential allows under the
// subject prefix P: publishing its hello, its frames and its
// acknowledgement (P.join.<name>, P.up.<name>, P.ack.<name>) and the
// replies to the coordinator's requests; subscribing to its inbox and its
// replies (P.site.<name>.>) and to the coordinators' announcements
// (P.coordinator). Nothing else: no other site's subjects, no JetStream.
// In a nats-server configuration file:
//
//	{nkey: <public key>, permissions: {
//	  publish: {allow: ["P.join.<name>", "P.up.<name>", "P.ack.<name>"]},
//	  subscribe: {allow: ["P.site.<name>.>", "P.coordinator"]},
//	  allow_responses: true}}
func SitePermissions(p, name string) *server.Permissions {
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: []string{joinSubject(p, name), upSubject(p, name), ackSubject(p, name)}},
		Subscribe: &server.SubjectPermission{Allow: []string{inboxPrefix(p, name) + ">", announceSubject(p)}},
		Response:  &server.ResponsePermission{MaxMsgs: 1, Expires: time.Minute},
	}
}
