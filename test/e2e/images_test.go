package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"pipectl.dev/pipectl/test/e2e/testbed"
)

// Images of the node agent's catalogue that the tests use.
const (
	// scriptImage binds scriptPath and sets a working directory and env (smoke test).
	scriptImage = "pipectl-e2e-script"
	scriptDir   = "/opt/pipectl-e2e-image"
	// pipectlImage has the pipectl binary built from this tree at /pipectl/pipectl.
	pipectlImage = testbed.PipectlImage
	// exampleImage has the attrition example's scripts in /app, python3 with torch on PATH.
	exampleImage = testbed.ExampleImage
)

// images is what TestMain prepared for the catalogue; launcherErr says why the launcher's
// images (pipectl, the example) are missing, if they are.
var images struct {
	pipectl     string // the pipectl binary built from this tree
	repoRoot    string
	prepared    *testbed.Prepared // what PushPipectlImages pushes
	launcherErr error
	// conformance is the conformance suite's probe: the folder of the
	// conformance-probe binary and the probe's state folder.
	conformance    struct{ bin, state string }
	conformanceErr error
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
	if img, err := probeImage(ctx, filepath.Join(dir, "images", "conformance")); err != nil {
		images.conformanceErr = err
		fmt.Fprintln(os.Stderr, "e2e: conformance probe unavailable:", err)
	} else {
		cat[conformanceImage] = img
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

// launcherImages builds pipectl from the repository and gathers the example's scripts
// (testbed.PipectlImages).
func launcherImages(ctx context.Context, dir string) (map[string]testbed.Image, error) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return nil, err
	}
	images.repoRoot = root
	p, err := testbed.PipectlImages(ctx, root, dir)
	if err != nil {
		return nil, err
	}
	images.pipectl = p.Pipectl
	images.prepared = p
	return p.Catalogue, nil
}

// shellImage is the image of the suite's shell pipelines: the host's root file system
// (sh, cat, …), declared so in its config (testbed.HostUse).
const shellImage = "e2e-shell:1"

// pushImages pushes to the test bed's registry the images the suite's pipelines name
// (pipectl's and the example's runtime image, testbed.PushPipectlImages; the shell and
// conformance probe images, which declare that they use the host's root file system)
// and sets imageFlags: from then on every compile and run --on argo pins its images to
// their digests in that registry.
func pushImages(ctx context.Context, c *testbed.Cluster, cat map[string]testbed.Image) error {
	if images.prepared != nil {
		if _, err := c.PushPipectlImages(ctx, images.repoRoot, images.prepared); err != nil {
			return err
		}
	}
	host := map[string]testbed.Image{shellImage: {}}
	if img, ok := cat[conformanceImage]; ok {
		host[conformanceImage+":1"] = img
	}
	for ref, entry := range host {
		img, err := testbed.DeclaredImage(testbed.HostUse{Root: true, Binds: entry.Binds}, entry.Env, entry.WorkingDir)
		if err != nil {
			return err
		}
		if _, err := c.Push(ctx, ref, img); err != nil {
			return err
		}
	}
	imageFlags = []string{"--insecure-registry", c.Registry, "--default-registry", c.Registry}
	return nil
}

// probeImage builds the conformance suite's probe (conformance/probe) into
// dir/bin and makes dir/state; the image has that bin first on PATH and
// CONFORMANCE_STATE set, both host folders, which pods see (host / is bound).
func probeImage(ctx context.Context, dir string) (testbed.Image, error) {
	bin, state := filepath.Join(dir, "bin"), filepath.Join(dir, "state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		return testbed.Image{}, err
	}
	// -trimpath and CGO_ENABLED=0, as pipectl's image binaries build: the probe then
	// finds the standard library they compiled.
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", filepath.Join(bin, "conformance-probe"), "./conformance/probe")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return testbed.Image{}, fmt.Errorf("build conformance-probe: %v\n%s", err, out)
	}
	images.conformance.bin, images.conformance.state = bin, state
	return testbed.Image{Env: []string{
		"PATH=" + bin + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"CONFORMANCE_STATE=" + state,
	}}, nil
}
