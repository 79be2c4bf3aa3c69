package federate

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/nats-io/nkeys"
)

// SiteKey is a site's identity on a server that gives every site its own
// credential: its name in the federation and its public NKey (a user
// key, "U…"). The site holds the matching seed.
type SiteKey struct {
	Name, PublicKey string
}

// NewKey creates an NKey pair and returns its seed ("SU…", to keep secret)
// and its public key ("U…").
func NewKey() (seed []byte, public string, err error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, "", fmt.Errorf("federate: create an NKey: %w", err)
	}
	if seed, err = kp.Seed(); err != nil {
		return nil, "", err
	}
	public, err = kp.PublicKey()
	return seed, public, err
}

// ReadSiteKeys reads a file of site keys: one site a line, its name then
// its public NKey, separated by spaces; blank lines and lines starting
// with '#' are skipped.
func ReadSiteKeys(path string) ([]SiteKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("federate: site keys: %w", err)
	}
	var keys []SiteKey
	sc := bufio.NewScanner(bytes.NewReader(b))
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("federate: %s:%d: want a site's name and its public NKey, got %d fields", path, line, len(f))
		}
		keys = append(keys, SiteKey{Name: f[0], PublicKey: f[1]})
		if err := checkSiteKeys(keys); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("federate: %s: %w", path, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("federate: %s: no site key", path)
	}
	return keys, nil
}

// checkSiteKeys checks the sites' names and public keys, and that no name
// or key comes twice.
func checkSiteKeys(keys []SiteKey) error {
	names, pubs := map[string]bool{}, map[string]bool{}
	for _, k := range keys {
		switch {
		case !ValidSiteName(k.Name):
			return protocolErr("site name %q: want 1 to %d printable characters, no space, '.', '*' or '>'", k.Name, maxName)
		case !nkeys.IsValidPublicUserKey(k.PublicKey):
			return protocolErr("site %s: %q is not a public user NKey (U…)", k.Name, k.PublicKey)
		case names[k.Name]:
			return protocolErr("site %s comes twice", k.Name)
		case pubs[k.PublicKey]:
			return protocolErr("site %s: its NKey is another site's", k.Name)
		}
		names[k.Name], pubs[k.PublicKey] = true, true
	}
	return nil
}
