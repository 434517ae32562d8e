// Command testbed starts and stops the pipectl Kubernetes test bed for people:
//
//	go run ./cmd/testbed up     # start in the background, print how to use it
//	                            # (and how to run the example with pipectl run --on argo)
//	go run ./cmd/testbed down   # stop it
//	go run ./cmd/testbed run    # start in the foreground until Ctrl-C
//
// (run from test/e2e; `make e2e-up` / `make e2e-down` from the repo root). State, logs
// and the kubeconfig live in --dir (default ~/.cache/pipectl/testbed).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"pipectl.dev/pipectl/test/e2e/testbed"
)

const usage = `usage: testbed up|down|run [--dir DIR]

  up    start the test bed in the background (images pipectl:e2e and the example's runtime
        built from this tree and pushed to its registry, namespace pipectl prepared for
        pipectl run --on argo) and print
        how to point kubectl and pipectl at it and run the example through Argo
  down  stop a test bed started with up
  run   start the test bed in the foreground; Ctrl-C stops it
`

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "testbed:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return errors.New("missing command")
	}
	fs := flag.NewFlagSet("testbed", flag.ContinueOnError)
	dir := fs.String("dir", defaultDir(), "folder for state, logs and kubeconfig")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "up":
		return up(ctx, abs)
	case "down":
		return down(ctx, abs)
	case "run":
		return serve(ctx, abs, true)
	case "serve": // the background process `up` starts
		return serve(ctx, abs, false)
	default:
		fmt.Fprint(os.Stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}

func defaultDir() string {
	if c := os.Getenv("PIPECTL_CACHE"); c != "" {
		return filepath.Join(c, "testbed")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "pipectl-testbed")
	}
	return filepath.Join(home, ".cache", "pipectl", "testbed")
}

func pidFile(dir string) string    { return filepath.Join(dir, "testbed.pid") }
func bannerFile(dir string) string { return filepath.Join(dir, "banner.txt") }
func logFile(dir string) string    { return filepath.Join(dir, "testbed.log") }

// runningPID is the pid of this folder's background test bed, or 0.
func runningPID(dir string) int {
	b, err := os.ReadFile(pidFile(dir))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || !strings.Contains(string(cmdline), "serve") {
		return 0 // stale: that process is gone (or the pid was reused)
	}
	return pid
}

// up starts `testbed serve` in its own session and waits until it is ready.
func up(ctx context.Context, dir string) error {
	if pid := runningPID(dir); pid != 0 {
		banner, _ := os.ReadFile(bannerFile(dir))
		fmt.Printf("testbed: already running (pid %d)\n%s", pid, banner)
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	logf, err := os.Create(logFile(dir))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(exe, "serve", "--dir", dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	// Show the background process's progress (builds take minutes when cold).
	follow, err := os.Open(logFile(dir))
	if err != nil {
		return err
	}
	defer follow.Close()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		_, _ = io.Copy(os.Stderr, follow)
		if b, err := os.ReadFile(bannerFile(dir)); err == nil {
			fmt.Print(string(b))
			return nil
		}
		select {
		case err := <-exited:
			_, _ = io.Copy(os.Stderr, follow)
			return fmt.Errorf("test bed failed to start (%v); log: %s", err, logFile(dir))
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
			<-exited
			return errors.New("interrupted; the test bed was stopped")
		case <-tick.C:
		}
	}
}

// serve runs the test bed until a signal: the body of `run` and of `up`'s background process.
func serve(ctx context.Context, dir string, foreground bool) error {
	if pid := runningPID(dir); pid != 0 && pid != os.Getpid() {
		return fmt.Errorf("a test bed already runs in %s (pid %d): testbed down first", dir, pid)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(pidFile(dir), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return err
	}
	defer os.Remove(pidFile(dir))
	defer os.Remove(bannerFile(dir))
	clusterDir := filepath.Join(dir, "cluster")
	if err := os.RemoveAll(clusterDir); err != nil {
		return err
	}
	root, err := testbed.FindRepoRoot()
	if err != nil {
		return err
	}
	// The image catalogue: pipectl built from this tree and the examples.
	fmt.Fprintln(os.Stderr, "testbed: building pipectl and gathering the examples (images "+testbed.PipectlImage+", "+testbed.ExampleImage+", "+testbed.SweepImage+")")
	began := time.Now()
	prepared, err := testbed.PipectlImages(ctx, root, filepath.Join(dir, "images"))
	if err != nil {
		return fmt.Errorf("images: %w", err)
	}
	fmt.Fprintf(os.Stderr, "testbed: images ready in %s\n", time.Since(began).Round(100*time.Millisecond))
	c, err := testbed.Start(ctx, testbed.Options{Dir: clusterDir, Kubectl: true, Images: prepared.Catalogue})
	if err != nil {
		return err
	}
	if _, err := c.PushPipectlImages(ctx, root, prepared); err != nil {
		_ = c.Stop()
		return fmt.Errorf("push images: %w", err)
	}
	fmt.Fprintf(os.Stderr, "testbed: preparing namespace %s (RBAC, Secret %s, bucket %s)\n", namespace, testbed.S3Secret, bucket)
	if err := c.PrepareNamespace(ctx, namespace, root, bucket); err != nil {
		_ = c.Stop()
		return fmt.Errorf("namespace %s: %w", namespace, err)
	}
	if err := c.SetKubeconfigNamespace(namespace); err != nil {
		_ = c.Stop()
		return err
	}
	banner := personBanner(c, root)
	if !foreground {
		banner += "\nStop it with: make e2e-down   (or: cd test/e2e && go run ./cmd/testbed down)\n"
	} else {
		banner += "\nCtrl-C stops it.\n"
	}
	if err := os.WriteFile(bannerFile(dir), []byte(banner), 0o644); err != nil {
		_ = c.Stop()
		return err
	}
	if foreground {
		fmt.Print(banner)
	}
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "testbed: stopping")
	return c.Stop()
}

// The namespace and bucket `up` and `run` prepare for `pipectl run --on argo`.
const (
	namespace = "pipectl"
	bucket    = "pipectl"
)

// personBanner says how to point kubectl and pipectl at the test bed and run the
// example through Argo, as commands to paste from the repository root.
func personBanner(c *testbed.Cluster, root string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nTest bed running (folder %s, logs %s).\n\n", c.Dir, c.Logs)
	fmt.Fprintf(&b, "Namespace %s is ready for pipectl run --on argo: ServiceAccounts %s and pipectl-launcher\n", namespace, testbed.StepServiceAccount)
	fmt.Fprintf(&b, "with their RBAC (examples/manifests), Secret %s (MinIO credentials), bucket %s; it is the\nkubeconfig's namespace.\n", testbed.S3Secret, bucket)
	fmt.Fprintf(&b, "Registry: %s (plain HTTP) holds %s (pipectl built from this tree) and %s (the examples'\nruntime: python3 with torch, the host's, declared in the image); runs pin them by digest.\n\n", c.Registry, testbed.PipectlImage, testbed.ExampleImage)
	fmt.Fprintf(&b, "From %s (bin/pipectl: make build), point kubectl and pipectl at it:\n\n", root)
	env := append(c.Env(), "PIPECTL_ARTIFACTS=s3://"+bucket+"/runs")
	fmt.Fprintf(&b, "  export %s\n", strings.Join(env, " "))
	if c.Kubectl != "" {
		fmt.Fprintf(&b, "  alias kubectl=%s\n", c.Kubectl)
	}
	fmt.Fprintf(&b, "\nRun the example (preprocess → train on 2 ranks as a JobSet → evaluate) through Argo:\n\n")
	fmt.Fprintf(&b, "  bin/pipectl run examples/attrition/pipeline.yaml --on argo --insecure-registry %s --default-registry %s -n %s --image %s --s3-secret %s --s3-endpoint http://%s --service-account %s\n",
		c.Registry, c.Registry, namespace, testbed.PipectlImage, testbed.S3Secret, c.MinIOEndpoint, testbed.StepServiceAccount)
	fmt.Fprintf(&b, "\nOr the sweep (a 2-rank trial per learning rate, each its own JobSet; the best one evaluated):\n\n")
	fmt.Fprintf(&b, "  bin/pipectl run examples/sweep/pipeline.yaml --on argo --insecure-registry %s --default-registry %s -n %s --image %s --s3-secret %s --s3-endpoint http://%s --service-account %s -p rows=4000 -p epochs=1\n",
		c.Registry, c.Registry, namespace, testbed.PipectlImage, testbed.S3Secret, c.MinIOEndpoint, testbed.StepServiceAccount)
	fmt.Fprintf(&b, "\nThen look at it:\n\n")
	for _, cmd := range []string{"runs ls", "runs get latest", "logs latest train", "artifacts cat latest/evaluate/metrics"} {
		fmt.Fprintf(&b, "  bin/pipectl %s\n", cmd)
	}
	fmt.Fprintf(&b, "  kubectl get workflows,jobsets,pods\n")
	fmt.Fprintf(&b, "\nNodes: %s (plain), %s (nvidia.com/gpu, tainted nvidia.com/gpu=present:NoSchedule)\n", testbed.NodeName, testbed.GPUNodeName)
	fmt.Fprintf(&b, "MinIO: http://%s (user %s)\n", c.MinIOEndpoint, testbed.MinIOAccessKey)
	return b.String()
}

// down stops the background test bed and waits until it is gone.
func down(ctx context.Context, dir string) error {
	pid := runningPID(dir)
	if pid == 0 {
		fmt.Println("testbed: not running")
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("stop pid %d: %w", pid, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if runningPID(dir) == 0 {
			fmt.Println("testbed: stopped")
			return nil
		}
		select {
		case <-ctx.Done():
			// Its components die with it (they run with a parent-death signal).
			_ = syscall.Kill(pid, syscall.SIGKILL)
			return fmt.Errorf("test bed (pid %d) did not stop in time; killed it", pid)
		case <-tick.C:
		}
	}
}
