package testbed

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// The test bed's OCI registry is go-containerregistry's pkg/registry, at the version the
// product pins (go.mod of the repository: v0.22.1), served by this process on a free
// loopback port over plain HTTP: blobs on disk under DIR/registry, manifests in memory,
// requests logged to logs/registry.log. It runs in the process that starts the test bed
// (the test binary, or `testbed serve` for make e2e-up) rather than as a tool of its own:
// the module is already in this module's graph through pipectl, so it costs no build.sh
// build (each tool takes minutes on 2 cores) and no process to supervise; it lives exactly
// as long as the Cluster.

// registryServer is the running registry.
type registryServer struct {
	addr string // 127.0.0.1:PORT
	port int
	srv  *http.Server
	logf *os.File
	done chan error
}

// startRegistry serves a registry on a free loopback port, blobs under dir, its log in logPath.
func startRegistry(dir, logPath string) (*registryServer, error) {
	blobs := filepath.Join(dir, "blobs")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("registry log: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		logf.Close()
		return nil, fmt.Errorf("registry listen: %w", err)
	}
	r := &registryServer{
		addr: ln.Addr().String(),
		port: ln.Addr().(*net.TCPAddr).Port,
		logf: logf,
		done: make(chan error, 1),
		srv: &http.Server{
			Handler: registry.New(
				registry.Logger(log.New(logf, "", log.LstdFlags|log.Lmicroseconds)),
				registry.WithBlobHandler(registry.NewDiskBlobHandler(blobs)),
			),
			ReadHeaderTimeout: 30 * time.Second,
		},
	}
	fmt.Fprintf(logf, "registry serving on %s, blobs in %s\n", r.addr, blobs)
	go func() { r.done <- r.srv.Serve(ln) }()
	return r, nil
}

// ready checks that the registry answers the OCI distribution API's version check.
func (r *registryServer) ready(ctx context.Context) error {
	return httpReady("http://" + r.addr + "/v2/")(ctx)
}

// stop closes the listener and open connections and waits for Serve to return.
func (r *registryServer) stop() error {
	err := r.srv.Close()
	if serr := <-r.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	r.logf.Close()
	return err
}
