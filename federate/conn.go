package federate

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// ConnOptions says how to connect to the federation's NATS server (Dial).
// At most one credential may be given: Token, NKeyFile, NKeySeed or
// CredsFile.
type ConnOptions struct {
	// Name names the connection on the server.
	Name string
	// Token is the shared token of a server started with
	// ServerConfig.Token.
	Token string
	// NKeyFile names a file holding the NKey seed of a site (or of the
	// coordinator), as `dadil federate keys` writes it; NKeySeed is such
	// a seed in memory.
	NKeyFile string
	NKeySeed []byte
	// CredsFile names a NATS user credentials file (a user JWT and its
	// NKey seed), for servers run in operator mode.
	CredsFile string
	// TLS: CA verifies the server's certificate (and makes the connection
	// TLS); Cert and Key, if given, are the client's certificate for
	// servers that ask for one.
	TLS TLSFiles
	// Subject and Site: when Site is not empty the connection speaks for
	// that site of the federation under the prefix Subject (default
	// DefaultSubject), and the replies to its requests arrive under its
	// own subjects, where a server giving every site its own NKey lets it
	// listen (SitePermissions).
	Subject, Site string
	// ConnectTimeout: while no server answers at the URL (or one drops
	// the connection before the handshake ends), the first connection is
	// tried again every 250 ms for this long (0: once). A refused
	// credential or certificate is not retried.
	ConnectTimeout time.Duration
	// InProcess, if not nil, connects in process to this server (the
	// embedded server of the coordinator's own process) instead of url.
	InProcess nats.InProcessConnProvider
}

// TLSFiles names the PEM files of a TLS configuration.
type TLSFiles struct {
	CA, Cert, Key string
}

// Dial connects to the NATS server at url as o says, reconnecting for ever
// (every 250 ms) after the server goes away.
func Dial(url string, o ConnOptions) (*nats.Conn, error) {
	opts, err := o.options()
	if err != nil {
		return nil, err
	}
	if o.InProcess != nil {
		// No network, hence no TLS: the URL only names the server.
		url = nats.DefaultURL
	}
	deadline := time.Now().Add(o.ConnectTimeout)
	for {
		nc, err := nats.Connect(url, opts...)
		if err == nil {
			return nc, nil
		}
		if !retryable(err) || time.Now().After(deadline) {
			return nil, fmt.Errorf("federate: connect to %s: %w", url, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// retryable reports whether a failed first connection may succeed later:
// no server listens yet, or the one there went away mid-handshake (a
// server restarting). A refused credential or certificate may not.
func retryable(err error) bool {
	var alert tls.AlertError
	var verify *tls.CertificateVerificationError
	if errors.Is(err, nats.ErrTLS) || errors.As(err, &alert) || errors.As(err, &verify) {
		return false
	}
	var op *net.OpError
	return errors.Is(err, nats.ErrNoServers) || errors.As(err, &op) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

// Connect connects to the NATS server at url with the token ("" for
// none), reconnecting for ever after a server restart.
func Connect(url, token, name string) (*nats.Conn, error) {
	return Dial(url, ConnOptions{Name: name, Token: token})
}

// options returns the nats.go options of o.
func (o *ConnOptions) options() ([]nats.Option, error) {
	opts := []nats.Option{nats.Name(o.Name), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond), nats.RetryOnFailedConnect(false),
		// Asynchronous errors (a permission refused) are read from
		// LastError; the default handler would only print them.
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})}
	creds := 0
	for _, given := range []bool{o.Token != "", o.NKeyFile != "", o.NKeySeed != nil, o.CredsFile != ""} {
		if given {
			creds++
		}
	}
	if creds > 1 {
		return nil, errors.New("federate: give one credential: a token, an NKey or a credentials file")
	}
	switch {
	case o.Token != "":
		opts = append(opts, nats.Token(o.Token))
	case o.NKeyFile != "":
		opt, err := nats.NkeyOptionFromSeed(o.NKeyFile)
		if err != nil {
			return nil, fmt.Errorf("federate: NKey seed %s: %w", o.NKeyFile, err)
		}
		opts = append(opts, opt)
	case o.NKeySeed != nil:
		kp, err := nkeys.FromSeed(o.NKeySeed)
		if err != nil {
			return nil, fmt.Errorf("federate: NKey seed: %w", err)
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return nil, fmt.Errorf("federate: NKey seed: %w", err)
		}
		opts = append(opts, nats.Nkey(pub, kp.Sign))
	case o.CredsFile != "":
		opts = append(opts, nats.UserCredentials(o.CredsFile))
	}
	if o.TLS.CA != "" {
		opts = append(opts, nats.RootCAs(o.TLS.CA))
	}
	if (o.TLS.Cert == "") != (o.TLS.Key == "") {
		return nil, errors.New("federate: a TLS certificate needs its key, and a key its certificate")
	}
	if o.TLS.Cert != "" {
		opts = append(opts, nats.ClientCert(o.TLS.Cert, o.TLS.Key))
	}
	if o.Site != "" {
		subject := o.Subject
		if subject == "" {
			subject = DefaultSubject
		}
		if !ValidSiteName(o.Site) || !validPrefix(subject) {
			return nil, protocolErr("site %q under %q: not a site name and subject prefix", o.Site, subject)
		}
		opts = append(opts, nats.CustomInboxPrefix(replyPrefix(subject, o.Site)))
	}
	if o.InProcess != nil {
		opts = append(opts, nats.InProcessServer(o.InProcess))
	}
	return opts, nil
}
