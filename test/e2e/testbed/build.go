package testbed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Tool names as test/e2e/tools knows them.
const (
	ToolEtcd = "etcd"
	// ToolKube is kube-apiserver, kube-controller-manager and kube-scheduler (with
	// scheduler-plugins' Coscheduling plugin) in one binary: its first argument names
	// the component (tools/kube/main.go).
	ToolKube      = "kube"
	ToolJobSet    = "jobset"
	ToolMinIO     = "minio"
	ToolNodeAgent = "nodeagent"
	ToolKubectl   = "kubectl"
)

// ArgoModule is the pinned Argo Workflows module whose CRDs (manifests/base/crds/full)
// the test bed installs; the product's go.mod pins the same version.
const ArgoModule = "github.com/argoproj/argo-workflows/v3@v3.7.18"

// FindToolsDir finds test/e2e/tools (the folder holding build.sh) from the working
// directory upwards, so tests and commands work from the repo root or from test/e2e.
func FindToolsDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		for _, cand := range []string{filepath.Join(dir, "tools"), filepath.Join(dir, "test", "e2e", "tools")} {
			if _, err := os.Stat(filepath.Join(cand, "build.sh")); err == nil {
				return cand, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no test/e2e/tools/build.sh above the working directory")
		}
		dir = parent
	}
}

// Build builds (or finds in the cache) the named tools with tools/build.sh and returns
// their binaries by name. Build progress goes to progress.
func Build(ctx context.Context, toolsDir string, progress io.Writer, names ...string) (map[string]string, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(toolsDir, "build.sh")}, names...)...)
	cmd.Stdout, cmd.Stderr = &out, progress
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("build %s: %w", strings.Join(names, " "), err)
	}
	paths := strings.Fields(out.String())
	if len(paths) != len(names) {
		return nil, fmt.Errorf("build.sh printed %d paths for %d tools: %q", len(paths), len(names), out.String())
	}
	bins := map[string]string{}
	for i, n := range names {
		bins[n] = paths[i]
	}
	return bins, nil
}

// toolModuleDir is the module cache folder of module as the go.mod tools/build.sh builds
// tool with requires it: the tool folder's go.mod, or that of the sibling its MODULE file
// names (tools sharing one module).
func toolModuleDir(ctx context.Context, toolsDir, tool, module string) (string, error) {
	dir := filepath.Join(toolsDir, tool)
	b, err := os.ReadFile(filepath.Join(dir, "MODULE"))
	switch {
	case err == nil:
		dir = filepath.Join(toolsDir, strings.TrimSpace(string(b)))
	case !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	return moduleDir(ctx, dir, module)
}

// moduleDir is the module cache folder of a module version (downloaded when missing).
// With dir set, module names a requirement of the go.mod in dir (`go list -m`).
func moduleDir(ctx context.Context, dir, module string) (string, error) {
	var cmd *exec.Cmd
	if dir != "" {
		cmd = exec.CommandContext(ctx, "go", "list", "-mod=mod", "-m", "-f", "{{.Dir}}", module)
		cmd.Dir = dir
	} else {
		cmd = exec.CommandContext(ctx, "go", "mod", "download", "-json", module)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locate module %s: %w: %s", module, err, stderr.String())
	}
	if dir == "" {
		for _, line := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), `"Dir": "`); ok {
				return strings.TrimSuffix(v, `",`), nil
			}
		}
		return "", fmt.Errorf("locate module %s: no Dir in go mod download output", module)
	}
	d := strings.TrimSpace(string(out))
	if d == "" {
		// Known to go.mod but not downloaded yet.
		return moduleDir(ctx, "", module)
	}
	return d, nil
}

// EnsureBubblewrap returns the bwrap binary, installing Debian's bubblewrap when missing.
func EnsureBubblewrap(ctx context.Context, progress io.Writer) (string, error) {
	if p, err := exec.LookPath("bwrap"); err == nil {
		return p, nil
	}
	fmt.Fprintln(progress, "testbed: installing bubblewrap (apt-get install -y bubblewrap)")
	install := func() error {
		cmd := exec.CommandContext(ctx, "apt-get", "install", "-y", "bubblewrap")
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = progress, progress
		return cmd.Run()
	}
	if err := install(); err != nil {
		upd := exec.CommandContext(ctx, "apt-get", "update")
		upd.Stdout, upd.Stderr = progress, progress
		if uerr := upd.Run(); uerr != nil {
			return "", fmt.Errorf("apt-get update: %w (bubblewrap is needed to run pods; install it as root)", uerr)
		}
		if err := install(); err != nil {
			return "", fmt.Errorf("apt-get install bubblewrap: %w", err)
		}
	}
	return exec.LookPath("bwrap")
}
