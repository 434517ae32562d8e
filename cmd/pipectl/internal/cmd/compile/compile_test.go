package compile

import (
	"encoding/base64"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
)

const example = "../../../../../examples/attrition/pipeline.yaml"

// run runs pipectl compile --image-tags ARGS (offline: no registry).
func run(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return runResolving(t, env, append([]string{"--image-tags"}, args...)...)
}

// runResolving runs pipectl compile ARGS.
func runResolving(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ios, _, out, errOut := podutil.Test()
	f := &cmdutil.Factory{IOStreams: ios, Version: "v9.9.9", Getenv: func(k string) string { return env[k] }}
	root := &cobra.Command{Use: "pipectl", SilenceErrors: true, SilenceUsage: true}
	root.PersistentFlags().StringVar(&f.ArtifactsRoot, "artifacts", "", "")
	root.AddCommand(NewCmdCompile(f, nil))
	root.SetArgs(append([]string{"compile"}, args...))
	root.SetOut(out)
	root.SetErr(errOut)
	err = root.Execute()
	return out.String(), errOut.String(), err
}

func TestCompileToStdout(t *testing.T) {
	out, _, err := run(t, nil, example, "--artifacts", "s3://ml/runs", "-p", "epochs=7", "--s3-secret", "pipectl-s3", "--no-ship-code")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"generateName: attrition-", "image: pipectl:v9.9.9", "value: \"7\"", "name: pipectl-s3", "value: s3://ml/runs"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestCompileToFile(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "wf.yaml")
	out, stderr, err := run(t, map[string]string{"PIPECTL_ARTIFACTS": "s3://env/runs"}, example, "-o", dest, "--image", "pipectl:1.2.3", "--no-ship-code")
	if err != nil {
		t.Fatal(err)
	}
	if out != "" {
		t.Errorf("stdout %q, want nothing with -o", out)
	}
	b, err := os.ReadFile(dest)
	if err != nil || !strings.Contains(string(b), "value: s3://env/runs") || !strings.Contains(string(b), "image: pipectl:1.2.3") {
		t.Errorf("wrote %q, %v", b, err)
	}
	if !strings.Contains(stderr, "Wrote "+dest) {
		t.Errorf("stderr %q", stderr)
	}
}

// Compiling ships each component's folder into the store once and writes
// its digest into the workflow; nothing is shipped when it does not compile.
func TestCompileShipsCode(t *testing.T) {
	store := t.TempDir()
	_, stderr, err := run(t, nil, example, "--artifacts", store, "--allow-non-s3", "-p", "epochs=notanumber")
	if err == nil {
		t.Fatal("compiled with a bad param")
	}
	if ents, _ := os.ReadDir(store); len(ents) != 0 {
		t.Fatalf("a failed compile wrote %v into the store", ents)
	}
	out, stderr, err := run(t, nil, example, "--artifacts", store, "--allow-non-s3")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "Code: 3 component folder(s), 3 stored now") {
		t.Errorf("stderr %q", stderr)
	}
	packs, err := filepath.Glob(filepath.Join(store, ".code", "*.tar"))
	if err != nil || len(packs) != 3 {
		t.Fatalf("packs %v, %v: want the example's 3 component folders", packs, err)
	}
	// The components travel base64-encoded (wire.Encode) in the pods' args.
	var decoded strings.Builder
	for _, tok := range regexp.MustCompile(`[A-Za-z0-9+/]{40,}={0,2}`).FindAllString(out, -1) {
		if b, err := base64.StdEncoding.DecodeString(tok); err == nil {
			decoded.Write(b)
		}
	}
	for _, p := range packs {
		digest := "sha256:" + strings.TrimSuffix(filepath.Base(p), ".tar")
		if !strings.Contains(decoded.String(), `"code":"`+digest+`"`) {
			t.Errorf("the workflow does not name the pack %s", digest)
		}
	}
	if _, stderr, err = run(t, nil, example, "--artifacts", store, "--allow-non-s3"); err != nil || !strings.Contains(stderr, "3 component folder(s), 0 stored now") {
		t.Errorf("a second compile: %v, %q (want every pack stored once)", err, stderr)
	}
}

func TestCompileErrorsWriteNothing(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: bad}\nsteps:\n  - name: a\n    component: {bogus: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(dir, "wf.yaml")
	for name, tc := range map[string]struct {
		args []string
		want string
		code int
	}{
		"bad file":  {[]string{bad, "--artifacts", "s3://b/r", "-o", dest}, bad + ":6:17", 1},
		"no store":  {[]string{example, "-o", dest}, "is not s3://", 1},
		"bad param": {[]string{example, "--artifacts", "s3://b/r", "-p", "epochs=lots", "-o", dest}, "-p epochs", 1},
		"bad -p":    {[]string{example, "--artifacts", "s3://b/r", "-p", "epochs", "-o", dest}, "expected name=value", 2},
		"no file":   {[]string{filepath.Join(dir, "missing.yaml"), "--artifacts", "s3://b/r", "-o", dest}, "missing.yaml", 1},
		"two files": {[]string{example, example}, "accepts 1 arg", 1},
	} {
		t.Run(name, func(t *testing.T) {
			out, _, err := run(t, nil, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if code := podutil.Code(err); code != tc.code {
				t.Errorf("exit code %d, want %d", code, tc.code)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("files left behind: %v", entries)
			}
		})
	}
}

// TestCompilePinsImages: compile pins every image through a real registry
// (in-process, loopback): the step images and --image become NAME@sha256:…
// in the workflow; a tag the registry does not have is an error naming the
// image and the registry, and nothing is written.
func TestCompilePinsImages(t *testing.T) {
	s := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer s.Close()
	reg := strings.TrimPrefix(s.URL, "http://")
	digests := map[string]string{}
	for _, ref := range []string{reg + "/pipectl:1", reg + "/example:0.1"} {
		img, err := random.Image(128, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := crane.Push(img, ref); err != nil {
			t.Fatal(err)
		}
		d, _ := img.Digest()
		digests[ref] = d.String()
	}
	dir := t.TempDir()
	pipe := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(pipe, []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: pinned}
steps:
  - name: a
    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: a}, image: "`+reg+`/example:0.1", command: [echo, hi]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dir) // no credentials of this machine
	var env map[string]string
	out, stderr, err := runResolving(t, env, pipe, "--artifacts", "s3://b/r", "--image", reg+"/pipectl:1", "--no-ship-code")
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, stderr)
	}
	for _, want := range []string{"image: " + reg + "/pipectl@" + digests[reg+"/pipectl:1"], "image: " + reg + "/example@" + digests[reg+"/example:0.1"]} {
		if !strings.Contains(out, want) {
			t.Errorf("workflow lacks %q", want)
		}
	}
	if strings.Contains(out, "pipectl:1") || strings.Contains(out, "example:0.1") {
		t.Errorf("the workflow still names a tag:\n%s", out)
	}
	if !strings.Contains(stderr, "Image "+reg+"/pipectl:1: "+reg+"/pipectl@sha256:") {
		t.Errorf("stderr %q does not report the pinned image", stderr)
	}

	dest := filepath.Join(dir, "wf.yaml")
	_, _, err = runResolving(t, env, pipe, "--artifacts", "s3://b/r", "--image", reg+"/pipectl:2", "-o", dest, "--no-ship-code")
	if err == nil || !strings.Contains(err.Error(), "image "+reg+"/pipectl:2: cannot resolve it to a digest through registry "+reg+": no such image or tag") {
		t.Errorf("unknown tag: %v", err)
	}
	if code := podutil.Code(err); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if _, serr := os.Stat(dest); serr == nil {
		t.Error("a workflow was written")
	}
	for _, bad := range [][]string{{"--insecure-registry", "http://" + reg}} {
		if _, _, err := runResolving(t, env, append([]string{pipe, "--artifacts", "s3://b/r"}, bad...)...); err == nil || podutil.Code(err) != 2 {
			t.Errorf("%q: %v (exit %d), want a flag error", bad, err, podutil.Code(err))
		}
	}
}

// TestCompileDefaultRegistry: with --default-registry, images named without
// a registry (the examples' pipectl-example-attrition:0.1, --image
// pipectl:1) are pinned in that registry, a real one on loopback.
func TestCompileDefaultRegistry(t *testing.T) {
	s := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer s.Close()
	reg := strings.TrimPrefix(s.URL, "http://")
	digests := map[string]string{}
	for _, ref := range []string{reg + "/pipectl:1", reg + "/pipectl-example-attrition:0.1"} {
		img, err := random.Image(128, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := crane.Push(img, ref); err != nil {
			t.Fatal(err)
		}
		d, _ := img.Digest()
		digests[ref] = d.String()
	}
	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no credentials of this machine
	out, stderr, err := runResolving(t, nil, example, "--artifacts", "s3://b/r", "--image", "pipectl:1", "--no-ship-code",
		"--default-registry", reg, "--insecure-registry", reg)
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, stderr)
	}
	for _, want := range []string{"image: " + reg + "/pipectl@" + digests[reg+"/pipectl:1"],
		"image: " + reg + "/pipectl-example-attrition@" + digests[reg+"/pipectl-example-attrition:0.1"]} {
		if !strings.Contains(out, want) {
			t.Errorf("workflow lacks %q", want)
		}
	}
	if !strings.Contains(stderr, "Image pipectl-example-attrition:0.1: "+reg+"/pipectl-example-attrition@sha256:") {
		t.Errorf("stderr %q does not report the pinned image", stderr)
	}
	if _, _, err := runResolving(t, nil, example, "--artifacts", "s3://b/r", "--no-ship-code", "--default-registry", reg+"/team"); err == nil || podutil.Code(err) != 2 || !strings.Contains(err.Error(), "--default-registry") {
		t.Errorf("--default-registry with a path: %v (exit %d), want a flag error naming it", err, podutil.Code(err))
	}
}
