package federate

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ServerConfig configures an embedded NATS server (StartServer).
type ServerConfig struct {
	// Host and Port to listen on; the zero values listen on a free port
	// of the loopback interface 127.0.0.1.
	Host string
	Port int
	// Token is the credential every client must present; it must not be
	// empty.
	Token string
	// MaxPayload bounds a message's payload, in bytes; 0 keeps the
	// server's default (1 MiB). Larger messages of atoms are cut into
	// frames of this size.
	MaxPayload int32
	// StoreDir, if not empty, enables JetStream with its files in this
	// folder.
	StoreDir string
}

// StartServer starts an in-process NATS server (nats-server as a library)
// that refuses every client without the token, and returns it once it
// accepts connections. Its ClientURL is the address to give clients;
// Shutdown stops it.
func StartServer(cfg ServerConfig) (*server.Server, error) {
	if cfg.Token == "" {
		return nil, errors.New("federate: the embedded server needs a token")
	}
	opts := &server.Options{
		Host:          cfg.Host,
		Port:          cfg.Port,
		Authorization: cfg.Token,
		MaxPayload:    cfg.MaxPayload,
		NoLog:         true,
		NoSigs:        true,
		HTTPPort:      0,
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
