package mpiagent

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"pipectl.dev/pipectl/components/wire"
)

// ServerName is the name in the run's certificate, which both sides check.
const ServerName = "pipectl-mpi"

// keyLifetime bounds the certificate's validity: longer than any run.
const keyLifetime = 366 * 24 * time.Hour

// Keys returns a new key pair for one run, as PEM: a self-signed
// certificate (both the agents' and the clients') and its private key.
func Keys(now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: ServerName},
		DNSNames:              []string{ServerName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(keyLifetime),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
}

// Config returns the mutual TLS configuration of the key pair in dir
// (wire.MPICertKey, wire.MPIKeyKey): it presents the pair and trusts it
// alone, as a server (server true) or a client.
func Config(dir string, server bool) (*tls.Config, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, wire.MPICertKey))
	if err != nil {
		return nil, fmt.Errorf("the run's MPI key pair: %w", err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, wire.MPIKeyKey))
	if err != nil {
		return nil, fmt.Errorf("the run's MPI key pair: %w", err)
	}
	return configOf(certPEM, keyPEM, server)
}

func configOf(certPEM, keyPEM []byte, server bool) (*tls.Config, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("the run's MPI key pair: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(certPEM) {
		return nil, errors.New("the run's MPI key pair: no certificate")
	}
	c := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS13}
	if server {
		c.ClientCAs, c.ClientAuth = pool, tls.RequireAndVerifyClientCert
	} else {
		c.RootCAs, c.ServerName = pool, ServerName
	}
	return c, nil
}
