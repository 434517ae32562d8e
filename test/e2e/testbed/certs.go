package testbed

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the test bed's certificate authority and the files it issued, all in dir.
type pki struct {
	dir    string
	caCert *x509.Certificate
	caKey  crypto.Signer
}

// keyPair names a certificate and its key on disk.
type keyPair struct{ cert, key string }

func newPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "pipectl-testbed-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	p := &pki{dir: dir, caCert: cert, caKey: key}
	if err := writePEM(p.caPath(), "CERTIFICATE", der); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *pki) caPath() string { return filepath.Join(p.dir, "ca.crt") }

// caPEM is the CA certificate in PEM form (for kubeconfigs and webhook caBundles).
func (p *pki) caPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.caCert.Raw})
}

// webhookCerts issues a loopback serving certificate into the folder NAME as tls.crt
// and tls.key, where a controller-runtime webhook server (JobSet's, Kueue's) reads
// them, and returns the folder.
func (p *pki) webhookCerts(name string) (string, error) {
	dir := filepath.Join(p.dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	kp, err := p.issue(name, name, nil, []string{"127.0.0.1", "localhost"})
	if err != nil {
		return "", err
	}
	for src, dst := range map[string]string{kp.cert: "tls.crt", kp.key: "tls.key"} {
		if err := os.Rename(src, filepath.Join(dir, dst)); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// issue writes NAME.crt and NAME.key: a server certificate when hosts is not empty
// (IPs and DNS names), a client certificate for cn in the groups orgs otherwise.
func (p *pki) issue(name, cn string, orgs, hosts []string) (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return keyPair{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if len(hosts) > 0 {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		for _, h := range hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		return keyPair{}, fmt.Errorf("issue %s: %w", name, err)
	}
	kp := keyPair{cert: filepath.Join(p.dir, name+".crt"), key: filepath.Join(p.dir, name+".key")}
	if err := writePEM(kp.cert, "CERTIFICATE", der); err != nil {
		return keyPair{}, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return keyPair{}, err
	}
	return kp, writePEM(kp.key, "EC PRIVATE KEY", keyDER)
}

// serviceAccountKey writes the RSA key pair that signs service-account tokens.
func (p *pki) serviceAccountKey() (keyPair, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return keyPair{}, err
	}
	kp := keyPair{cert: filepath.Join(p.dir, "sa.pub"), key: filepath.Join(p.dir, "sa.key")}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return keyPair{}, err
	}
	if err := writePEM(kp.cert, "PUBLIC KEY", pub); err != nil {
		return keyPair{}, err
	}
	return kp, writePEM(kp.key, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key))
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
