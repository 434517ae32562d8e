package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/plan"
)

// forbidden are the packages the pod runtime must not link: the UI, the
// compiler and Argo's client and types, the image resolver, the local
// runner, the pipeline importers, the other commands and their shared
// cmdutil (which links all of them), the launcher and the Kubernetes
// client (the launcher pod runs pipectl), the headless browser.
var forbidden = []string{
	"pipectl.dev/pipectl/cmd/pipectl/internal/ui",
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil",
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/root",
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/compile",
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/run",
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/ui",
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/launch",
	"pipectl.dev/pipectl/cmd/internal/podutil/podkube",
	"pipectl.dev/pipectl/launcher",
	"k8s.io/client-go/",
	"sigs.k8s.io/jobset/client-go/",
	"pipectl.dev/pipectl/cmd/pipectl/internal/imagebuild",
	"pipectl.dev/pipectl/pipeline/argo",
	"pipectl.dev/pipectl/pipeline/argorun",
	"pipectl.dev/pipectl/pipeline/images",
	"pipectl.dev/pipectl/pipeline/imports",
	"pipectl.dev/pipectl/pipeline/local",
	"pipectl.dev/pipectl/pipeline/runstore",
	"github.com/argoproj/",
	"github.com/chromedp/",
	"github.com/google/go-containerregistry/",
}

// forbiddenExact are forbidden as themselves, not their sub-packages.
var forbiddenExact = map[string]bool{"pipectl.dev/pipectl/launcher": true}

// maxDeps bounds the packages the pod runtime links (410 when written, the
// standard library's among them): a new dependency that pulls in a tree of
// packages fails here before it shows in every pod's start.
const maxDeps = 450

// maxSize bounds the stripped pod runtime (linux/amd64: 16,187,554 bytes when
// written, against 56,553,737 for pipectl stripped; the goal is 25 MB).
const maxSize = 20 << 20

// TestPodRuntimeLinksNoForbiddenPackage: go list -deps of pipectl-pod names
// none of the forbidden packages and stays under maxDeps.
func TestPodRuntimeLinksNoForbiddenPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f || (!forbiddenExact[f] && strings.HasPrefix(d, strings.TrimSuffix(f, "/")+"/")) {
				t.Errorf("the pod runtime links %s (forbidden: %s)", d, f)
			}
		}
	}
	if len(deps) > maxDeps || len(deps) < 100 {
		t.Errorf("the pod runtime links %d packages, want at most %d", len(deps), maxDeps)
	}
	t.Logf("pipectl-pod links %d packages", len(deps))
}

// TestPodRuntime builds pipectl-pod as the image does (static, stripped),
// bounds its size, and runs it: --version; exec --install copies it;
// exec runs a step against a store and publishes its output; launch and
// compile are not its commands.
func TestPodRuntime(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "pipectl-pod")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > maxSize {
		t.Errorf("pipectl-pod is %d bytes stripped, want at most %d", fi.Size(), maxSize)
	}
	t.Logf("pipectl-pod: %d bytes", fi.Size())
	checkInit(t, bin)
	run := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "PIPECTL_ARTIFACTS="+filepath.Join(dir, "store"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("--version"); err != nil || !strings.HasPrefix(out, "pipectl-pod version ") {
		t.Errorf("--version: %q, %v", out, err)
	}
	dst := filepath.Join(dir, "volume", "pipectl")
	if out, err := run("exec", "--install", dst); err != nil {
		t.Fatalf("exec --install: %v\n%s", err, out)
	}
	if got, err := os.Stat(dst); err != nil || got.Size() != fi.Size() || got.Mode()&0o111 == 0 {
		t.Errorf("installed %s: %v, %v; want an executable copy of %d bytes", dst, got, err, fi.Size())
	}
	comp, err := wire.Encode(&components.Program{
		Version: components.ProgramVersion, Name: "hello",
		Inputs:  []components.ProgramIO{{Name: "who", Type: "string"}},
		Outputs: []components.ProgramIO{{Name: "greeting", Type: "string"}},
		Command: []string{"sh", "-c", `printf 'hi %s' "$0" > "$1"`, "{{inputs.who}}", "{{outputs.greeting.path}}"},
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := wire.Encode(&plan.Wiring{Version: wire.WiringVersion, Step: "hello", Params: map[string]plan.Text{"who": {{Param: "who"}}}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := run("exec", "--run", "r1", "--component", comp, "--step", st, "--param", "who=pods",
		"--work", filepath.Join(dir, "work"), "--output-params", filepath.Join(dir, "outputs"))
	if err != nil {
		t.Fatalf("exec: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "outputs", "greeting")); err != nil || string(b) != "hi pods" {
		t.Errorf("the output parameter: %q, %v\n%s", b, err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "store", "r1", "hello")); err != nil {
		t.Errorf("the step's records in the store: %v", err)
	}
	for _, c := range []string{"launch", "compile"} {
		if out, err := run(c, "--help"); err == nil || !strings.Contains(out, `unknown command "`+c+`"`) {
			t.Errorf("%s: %v, %q; want an unknown command", c, err, out)
		}
	}
}

// maxInitAllocs bounds the allocations of the pod runtime's package
// initialisers, all packages (6,936 when written, 10,501 before pipectl's
// own regular expressions were compiled on first use; minio-go's s3utils
// and the Kubernetes API types make most of the rest), and maxOwnInitAllocs
// those of pipectl's packages (188, from 3,754): every pod pays them before
// exec's first line. A package-level regexp.MustCompile costs 50 to 300.
const (
	maxInitAllocs    = 8000
	maxOwnInitAllocs = 400
)

// checkInit runs bin with GODEBUG=inittrace=1 and bounds the allocations
// of the package initialisers it reports.
func checkInit(t *testing.T, bin string) {
	t.Helper()
	cmd := exec.Command(bin, "exec", "--help")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("exec --help: %v\n%s", err, out)
	}
	all, own, n := 0, 0, 0
	var ours []string
	for _, line := range strings.Split(string(out), "\n") {
		// init PKG @T ms, C ms clock, B bytes, A allocs
		f := strings.Fields(line)
		if len(f) != 11 || f[0] != "init" || f[10] != "allocs" {
			continue
		}
		a, err := strconv.Atoi(f[9])
		if err != nil {
			t.Fatalf("inittrace line %q: %v", line, err)
		}
		n++
		all += a
		if strings.HasPrefix(f[1], "pipectl.dev/") {
			own += a
			ours = append(ours, fmt.Sprintf("%s %d", f[1], a))
		}
	}
	if n < 50 {
		t.Fatalf("inittrace reported %d initialisers, want the pod runtime's:\n%s", n, out)
	}
	if all > maxInitAllocs {
		t.Errorf("the pod runtime's package initialisers allocate %d times, want at most %d", all, maxInitAllocs)
	}
	if own > maxOwnInitAllocs {
		t.Errorf("pipectl's package initialisers in the pod runtime allocate %d times, want at most %d (compile regular expressions on first use, sync.OnceValue):\n%s",
			own, maxOwnInitAllocs, strings.Join(ours, "\n"))
	}
	t.Logf("package init: %d initialisers, %d allocations, %d of them pipectl's", n, all, own)
}
