package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nkeys"

	"github.com/dadil/dadil/federate"
	"github.com/dadil/dadil/internal/atomicfile"
	"github.com/dadil/dadil/internal/clip"
)

// runFederateKeys is dadil federate keys: an NKey per site (its seed in
// DIR/NAME.nk, kept if it exists) and the file of their public keys that
// serve --site-keys reads.
func runFederateKeys(args []string, e *env) error {
	fs := newFlags("dadil federate keys", e)
	var dir, out string
	fs.StringVar(&dir, "dir", ".", "folder of the sites' seed files `DIR`/NAME.nk (made if missing)")
	fs.StringVar(&out, "out", "", "the sites' public keys to `FILE` (default DIR/sites.keys), for serve --site-keys")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dadil federate keys [--dir DIR] [--out FILE] NAME...")
		fmt.Fprintln(fs.Output(), "\nGives every named site an NKey: its seed, secret, in DIR/NAME.nk (mode 0600; an existing")
		fmt.Fprintln(fs.Output(), "one is kept), to hand to that site only (join --nkey), and writes the sites' public keys")
		fmt.Fprintln(fs.Output(), "to FILE (serve --site-keys).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil { // positional names: not parse's check
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() == 0 {
		return usageError{errors.New("name at least one site")}
	}
	if out == "" {
		out = filepath.Join(dir, "sites.keys")
	}
	seen := map[string]bool{}
	for _, name := range fs.Args() {
		if !federate.ValidSiteName(name) || seen[name] {
			return usageError{fmt.Errorf("site name %s: want distinct names of 1 to 64 printable characters, no space, '.', '*' or '>'", clip.Quote(name))}
		}
		seen[name] = true
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var list bytes.Buffer
	list.WriteString("# dadil federate: the sites' public NKeys (serve --site-keys)\n")
	for _, name := range fs.Args() {
		pub, made, err := siteKey(filepath.Join(dir, name+".nk"))
		if err != nil {
			return err
		}
		fmt.Fprintf(&list, "%s %s\n", name, pub)
		what := "kept"
		if made {
			what = "new"
		}
		fmt.Fprintf(e.stderr, "%s: %s (%s seed in %s)\n", name, pub, what, filepath.Join(dir, name+".nk"))
	}
	if err := atomicfile.Write(out, list.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "public keys of %d sites in %s\n", len(seen), out)
	return nil
}

// siteKey returns the public key of the seed in path, creating the seed
// (mode 0600) if the file does not exist; made reports a new seed.
func siteKey(path string) (pub string, made bool, err error) {
	b, err := os.ReadFile(path)
	if err == nil {
		kp, err := nkeys.FromSeed(bytes.TrimSpace(b))
		if err != nil {
			return "", false, fmt.Errorf("%s: not an NKey seed: %w", path, err)
		}
		pub, err := kp.PublicKey()
		if err == nil && !strings.HasPrefix(pub, "U") {
			err = errors.New("not a user key")
		}
		if err != nil {
			return "", false, fmt.Errorf("%s: %w", path, err)
		}
		return pub, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", false, err
	}
	seed, pub, err := federate.NewKey()
	if err != nil {
		return "", false, err
	}
	err = atomicfile.WriteFunc(path, 0o600, func(w io.Writer) error {
		_, err := w.Write(append(seed, '\n'))
		return err
	})
	return pub, true, err
}
