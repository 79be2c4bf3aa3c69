// Package testpki makes a throwaway certificate authority and
// certificates for tests of TLS connections on 127.0.0.1: nothing is
// committed, everything lives in the test's temporary folder.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Files are the PEM files Write makes: the CA's certificate, a server
// certificate for 127.0.0.1 and localhost, a client certificate, and a
// client certificate signed by another CA (Rogue), each with its key.
type Files struct {
	CA                    string
	ServerCert, ServerKey string
	ClientCert, ClientKey string
	RogueCert, RogueKey   string
}

// Write makes the certificates in dir, valid for an hour.
func Write(t testing.TB, dir string) Files {
	t.Helper()
	f := Files{CA: filepath.Join(dir, "ca.pem")}
	ca, caKey := authority(t, "dadil test CA")
	write(t, f.CA, "CERTIFICATE", ca.Raw)
	f.ServerCert, f.ServerKey = leaf(t, dir, "server", ca, caKey, x509.ExtKeyUsageServerAuth)
	f.ClientCert, f.ClientKey = leaf(t, dir, "client", ca, caKey, x509.ExtKeyUsageClientAuth)
	rogue, rogueKey := authority(t, "another CA")
	f.RogueCert, f.RogueKey = leaf(t, dir, "rogue", rogue, rogueKey, x509.ExtKeyUsageClientAuth)
	return f
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// authority returns a self-signed CA certificate and its key.
func authority(t testing.TB, name string) (*x509.Certificate, *ecdsa.PrivateKey) {
	key := newKey(t)
	tmpl := &x509.Certificate{SerialNumber: serial(t), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c, key
}

// leaf writes dir/name.pem and dir/name-key.pem, a certificate for
// 127.0.0.1 and localhost signed by ca, and returns their paths.
func leaf(t testing.TB, dir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, usage x509.ExtKeyUsage) (string, string) {
	key := newKey(t)
	tmpl := &x509.Certificate{SerialNumber: serial(t), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, keyPath := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	write(t, cert, "CERTIFICATE", der)
	write(t, keyPath, "EC PRIVATE KEY", kb)
	return cert, keyPath
}

func write(t testing.TB, path, kind string, der []byte) {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
