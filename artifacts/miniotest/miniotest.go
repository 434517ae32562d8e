// Package miniotest starts a real MinIO server for tests and benchmarks: on
// a free loopback port, with a temporary data directory and random root
// credentials. Start(t) stops it when the test ends; Run leaves that to the
// caller.
//
// The server binary is $PIPECTL_TEST_MINIO; when that is unset it is built
// (once per process) with test/e2e/tools/build.sh of the module being
// tested (the folder of `go env GOMOD`).
package miniotest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// EnvBinary names the MinIO server binary to use.
const EnvBinary = "PIPECTL_TEST_MINIO"

// EnvMC names MinIO's client, mc, for the benchmarks that compare with it.
const EnvMC = "PIPECTL_TEST_MC"

// startTimeout bounds the wait for a server to answer its health check.
const startTimeout = 60 * time.Second

// Server is a running MinIO server.
type Server struct {
	// Endpoint is the server's URL, e.g. http://127.0.0.1:40123.
	Endpoint string
	// Host is the server's host:port.
	Host string
	// AccessKey and SecretKey are the root credentials.
	AccessKey, SecretKey string
	// Dir is the data directory.
	Dir string

	bin    string
	mu     sync.Mutex
	proc   *os.Process // nil when stopped
	exited chan error
}

// Start starts a MinIO server with its data in a temporary directory; it
// is stopped when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := Run(Binary(t), t.TempDir())
	if err != nil {
		t.Fatalf("start MinIO: %v", err)
	}
	t.Cleanup(s.Kill)
	return s
}

// Run starts the MinIO server bin with its data in dir. The caller stops it
// with Kill.
func Run(bin, dir string) (*Server, error) {
	s := &Server{
		bin:       bin,
		AccessKey: "test-" + randomHex(6),
		SecretKey: "secret-" + randomHex(16),
		Dir:       dir,
	}
	var err error
	for range 3 { // a free port can be taken between the probe and the start
		var port int
		if port, err = freePort(); err != nil {
			continue
		}
		s.Host = fmt.Sprintf("127.0.0.1:%d", port)
		s.Endpoint = "http://" + s.Host
		if err = s.start(); err == nil {
			return s, nil
		}
	}
	return nil, err
}

// Kill stops the server at once (SIGKILL). It can be started again with Restart.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return
	}
	_ = s.proc.Kill()
	<-s.exited
	s.proc = nil
}

// Restart starts the server again (killing it first if it runs) on the
// same port, credentials and data.
func (s *Server) Restart() error {
	s.Kill()
	deadline := time.Now().Add(startTimeout)
	for {
		err := s.start()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("restart MinIO: %w", err)
		}
		time.Sleep(200 * time.Millisecond) // the port may linger a moment
	}
}

// Pid returns the server's process id, or 0 when it is stopped.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.Pid
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &logBuffer{}
	cmd := exec.Command(s.bin, "server", "--quiet", "--address", s.Host,
		"--console-address", "127.0.0.1:0", "--certs-dir", filepath.Join(s.Dir, ".certs"), filepath.Join(s.Dir, "data"))
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+s.AccessKey,
		"MINIO_ROOT_PASSWORD="+s.SecretKey,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
		"HOME="+s.Dir,
	)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("minio exited: %v\n%s", err, out.String())
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("minio did not become ready in %v\n%s", startTimeout, out.String())
		case <-tick.C:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.Endpoint+"/minio/health/ready", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			continue
		}
		// Health checks pass a moment before the object layer serves
		// requests ("Server not initialized yet"), and the root user is
		// served before the IAM sub-system that knows every other key:
		// wait until both answer for real.
		if _, err := s.Client().ListBuckets(ctx); err == nil && s.iamReady(ctx) {
			break
		}
	}
	s.proc, s.exited = cmd.Process, exited
	return nil
}

// iamReady reports whether the server answers a request signed by an
// unknown key as such, rather than with "IAM sub-system not initialized yet".
func (s *Server) iamReady(ctx context.Context) bool {
	c, err := minio.New(s.Host, &minio.Options{Creds: credentials.NewStaticV4("pipectl-probe", "pipectl-probe-secret", ""), MaxRetries: 1})
	if err != nil {
		return false
	}
	_, err = c.ListBuckets(ctx)
	return minio.ToErrorResponse(err).Code == "InvalidAccessKeyId"
}

// Client returns a minio-go client with the root credentials, for tests
// that act behind pipectl's back.
func (s *Server) Client() *minio.Client {
	c, err := minio.New(s.Host, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, "")})
	if err != nil {
		panic(err) // Host is always a valid host:port
	}
	return c
}

// MakeBucket creates a bucket.
func (s *Server) MakeBucket(ctx context.Context, name string) error {
	if err := s.Client().MakeBucket(ctx, name, minio.MakeBucketOptions{}); err != nil {
		return fmt.Errorf("make bucket %s: %w", name, err)
	}
	return nil
}

// Binary returns the path of the MinIO server binary: $PIPECTL_TEST_MINIO,
// or one built by test/e2e/tools/build.sh.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(EnvBinary); p != "" {
		return p
	}
	p, err := BuildTool("minio")
	if err != nil {
		t.Fatalf("MinIO binary (set %s or fix the build): %v", EnvBinary, err)
	}
	return p
}

var built struct {
	mu    sync.Mutex
	paths map[string]string
}

// BuildTool builds the pinned test tool name (minio, mc, …) with
// test/e2e/tools/build.sh and returns its path. Builds are cached.
func BuildTool(name string) (string, error) {
	built.mu.Lock()
	defer built.mu.Unlock()
	if p, ok := built.paths[name]; ok {
		return p, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	// The test bed's module (test/e2e) has a go.mod of its own: the
	// repository is the nearest folder above holding the build script.
	script := filepath.Join("test", "e2e", "tools", "build.sh")
	for dir := root; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, script)); err == nil {
			root = dir
			break
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no %s in %s or a folder above it", script, root)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("bash", filepath.Join(root, script), name)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build.sh %s: %v\n%s", name, err, stderr.String())
	}
	lines := strings.Fields(stdout.String())
	if len(lines) == 0 {
		return "", fmt.Errorf("build.sh %s printed no path\n%s", name, stderr.String())
	}
	p := lines[len(lines)-1]
	if built.paths == nil {
		built.paths = map[string]string{}
	}
	built.paths[name] = p
	return p, nil
}

// RepoRoot returns the root of the pipectl repository: the folder of the
// go.mod of the module being tested, as the go command reports it.
func RepoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the pipectl module (go env GOMOD is empty)")
	}
	return filepath.Dir(mod), nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails
	return hex.EncodeToString(b)
}

// logBuffer keeps the server's output: the process writes it while tests
// read it.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
