package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"pipectl.dev/pipectl/test/e2e/testbed"
)

// Images of the node agent's catalogue that the tests use.
const (
	// scriptImage binds scriptPath and sets a working directory and env (smoke test).
	scriptImage = "pipectl-e2e-script"
	scriptDir   = "/opt/pipectl-e2e-image"
	// pipectlImage has the pipectl binary built from this tree at /pipectl/pipectl, as
	// the real image (cmd/pipectl/Dockerfile).
	pipectlImage = "pipectl:e2e"
	// exampleImage has the attrition example's scripts in /app and a python3 with torch
	// first on PATH, as examples/attrition/Dockerfile.
	exampleImage = "pipectl-example-attrition:0.1"
)

// images is what TestMain prepared for the catalogue; launcherErr says why the launcher's
// images (pipectl, the example) are missing, if they are.
var images struct {
	pipectl     string // the pipectl binary built from this tree
	repoRoot    string
	launcherErr error
}

// catalogue prepares the image catalogue's host files in dir and returns it. A failure
// to build pipectl or to find torch only fails the tests that need those images.
func catalogue(ctx context.Context, dir string) (map[string]testbed.Image, error) {
	scripts := filepath.Join(dir, "images", "script")
	if err := os.MkdirAll(scripts, 0o755); err != nil {
		return nil, err
	}
	hello := filepath.Join(scripts, "hello.sh")
	if err := os.WriteFile(hello, []byte("echo \"pwd=$(pwd) greeting=$GREETING mode=$MODE\"\n"), 0o644); err != nil {
		return nil, err
	}
	cat := map[string]testbed.Image{
		scriptImage: {
			Binds:      []testbed.Bind{{Host: hello, Path: scriptDir + "/hello.sh", ReadOnly: true}},
			WorkingDir: scriptDir,
			Env:        []string{"GREETING=from-image", "MODE=image"},
		},
	}
	launcher, err := launcherImages(ctx, filepath.Join(dir, "images"))
	if err != nil {
		images.launcherErr = err
		fmt.Fprintln(os.Stderr, "e2e: launcher images unavailable:", err)
		return cat, nil
	}
	for ref, img := range launcher {
		cat[ref] = img
	}
	return cat, nil
}

// launcherImages builds pipectl from the repository and gathers the example's scripts.
func launcherImages(ctx context.Context, dir string) (map[string]testbed.Image, error) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return nil, err
	}
	if b, err := os.ReadFile(filepath.Join(root, "go.mod")); err != nil || !strings.Contains(string(b), "module pipectl.dev/pipectl\n") {
		return nil, fmt.Errorf("repository root %s: no go.mod of pipectl.dev/pipectl (%v)", root, err)
	}
	images.repoRoot = root
	bin := filepath.Join(dir, "pipectl", "pipectl")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/pipectl")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build pipectl: %v\n%s", err, out)
	}
	images.pipectl = bin

	app := filepath.Join(dir, "attrition-app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		return nil, err
	}
	scripts, err := filepath.Glob(filepath.Join(root, "examples", "attrition", "components", "*", "*.py"))
	if err != nil || len(scripts) == 0 {
		return nil, fmt.Errorf("example scripts: none found (%v)", err)
	}
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(app, filepath.Base(s)), b, 0o755); err != nil {
			return nil, err
		}
	}
	torch := exec.CommandContext(ctx, "bash", filepath.Join(root, "examples", "attrition", "ensure-torch.sh"))
	torch.Stderr = os.Stderr
	out, err := torch.Output()
	if err != nil {
		return nil, fmt.Errorf("examples/attrition/ensure-torch.sh: %w", err)
	}
	pyDir := strings.TrimSpace(string(out))
	if pyDir == "" {
		return nil, errors.New("examples/attrition/ensure-torch.sh printed no folder")
	}
	return map[string]testbed.Image{
		pipectlImage: {Binds: []testbed.Bind{{Host: bin, Path: "/pipectl/pipectl", ReadOnly: true}}},
		exampleImage: {
			Binds:      []testbed.Bind{{Host: app, Path: "/app", ReadOnly: true}},
			WorkingDir: "/app",
			Env:        []string{"PATH=" + pyDir + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		},
	}, nil
}
