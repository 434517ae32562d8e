package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"pipectl.dev/pipectl/test/e2e/testbed"
)

// An image rebuilt under the same tag re-runs the steps that use it: each run pins the tag
// to the digest it names now, and the step's fingerprint holds that digest. The image is
// the example's runtime image (the host's python and shell, declared in its config) with
// pipectl's binary layer on top (weight: a warm pull unpacks it from the agent's layer
// cache) and a BUILD variable, pushed to the test bed's registry; the node agent pulls it
// by digest and runs the step in its root file system (no /home there, /app there). The
// agent's pulls are logged with their times.
func TestImageRebuiltUnderSameTag(t *testing.T) {
	a, ctx := newArgoLab(t)
	if images.prepared == nil {
		t.Fatal("no runtime image: pipectl's images were not prepared")
	}
	ref, err := name.ParseReference(a.c.Registry+"/"+pipectlImage, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	pipectl, err := remote.Image(ref, remote.WithContext(ctx), remote.WithPlatform(v1.Platform{OS: "linux", Architecture: runtime.GOARCH}))
	if err != nil {
		t.Fatalf("pipectl's image in the test bed's registry: %v", err)
	}
	layers, err := pipectl.Layers()
	if err != nil || len(layers) == 0 {
		t.Fatalf("pipectl's image layers: %d, %v", len(layers), err)
	}
	const tag = "e2e-rebuilt:1"
	push := func(build string) string {
		t.Helper()
		runtimeImg, err := testbed.RuntimeImage(images.prepared.Python)
		if err != nil {
			t.Fatal(err)
		}
		base, err := mutate.AppendLayers(runtimeImg, layers[len(layers)-1])
		if err != nil {
			t.Fatal(err)
		}
		cf, err := base.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		cfg := *cf.Config.DeepCopy()
		cfg.Env = append(cfg.Env, "BUILD="+build)
		img, err := mutate.Config(base, cfg)
		if err != nil {
			t.Fatal(err)
		}
		pinned, err := a.c.Push(ctx, tag, img)
		if err != nil {
			t.Fatal(err)
		}
		return pinned
	}
	first := push("one")
	file := writePipeline(t, `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: rebuilt}
steps:
  - name: show
    component:
      metadata: {name: show}
      image: `+tag+`
      command: [sh, -c, 'echo "build=$BUILD home=$(test -e /home && echo yes || echo no) app=$(test -d /app && echo yes || echo no)"']
`)
	run1 := a.runArgoOK(t, ctx, file, []string{"[show] build=one home=no app=yes"}, []string{"Image " + tag + ": " + first})
	if got := a.cachedSteps(ctx, run1)["show"]; got != "" {
		t.Errorf("first run: show cached from %s", got)
	}
	if img := a.stepImage(ctx, run1, "show"); img != first {
		t.Errorf("first run: show's image %q, want %s", img, first)
	}
	// Same tag, same image: cached, no workflow.
	_, errOut, code := a.runArgo(ctx, file)
	if code != 0 || !strings.Contains(errOut, "no workflow submitted") {
		t.Fatalf("re-run with the same image: exit %d, want every step cached:\n%s", code, errOut)
	}
	// Rebuilt under the same tag: a new digest, and show runs again in it.
	second := push("two")
	if second == first {
		t.Fatalf("the rebuilt image has the first one's digest %s", first)
	}
	run3 := a.runArgoOK(t, ctx, file, []string{"[show] build=two home=no app=yes"}, []string{"Image " + tag + ": " + second})
	if got := a.cachedSteps(ctx, run3)["show"]; got != "" {
		t.Errorf("after the rebuild: show cached from %s, want it run again", got)
	}
	if img := a.stepImage(ctx, run3, "show"); img != second {
		t.Errorf("after the rebuild: show's image %q, want %s", img, second)
	}
	// The rebuilt image's layers were in the agent's cache (the runtime layer and
	// pipectl's binary layer, pulled before): nothing downloaded, unpacked anew.
	var warm *pull
	all := pulls(t, a.c)
	for i := range all {
		if all[i].Ref == second {
			warm = &all[i]
		}
	}
	if warm == nil || warm.Layers != 2 || warm.LayersDownloaded != 0 || !warm.Unpacked {
		t.Errorf("the agent's pull of the rebuilt image %s: %+v, want 2 layers, none downloaded, unpacked", second, warm)
	}
	for _, p := range all {
		t.Logf("pulled %s: %d of %d layers downloaded (%d bytes) in %.2f s, unpacked %v, %.2f s in all",
			p.Ref, p.LayersDownloaded, p.Layers, p.Bytes, p.Download, p.Unpacked, p.Seconds)
	}
}

// stepImage is the image a step of a run ran in, from its record.
func (a *argoLab) stepImage(ctx context.Context, run, step string) string {
	a.t.Helper()
	js, _, code := a.pipectl(ctx, "runs", "get", run, "-o", "json")
	var rec struct {
		Steps []struct {
			Name  string `json:"name"`
			Image string `json:"image"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(js), &rec); err != nil || code != 0 {
		a.t.Fatalf("runs get %s: %v (exit %d)\n%s", run, err, code, js)
	}
	for _, s := range rec.Steps {
		if s.Name == step {
			return s.Image
		}
	}
	return ""
}

// pull is one image pull of the node agent, from its log.
type pull struct {
	Ref                      string
	Layers, LayersDownloaded int
	Bytes                    int64
	Unpacked                 bool
	Download, Seconds        float64
}

// pulls reads the node agent's "image pulled" lines.
func pulls(t testing.TB, c *testbed.Cluster) []pull {
	t.Helper()
	f, err := os.Open(filepath.Join(c.Logs, "nodeagent.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []pull
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, `msg="image pulled"`) {
			continue
		}
		kv := map[string]string{}
		for _, f := range strings.Fields(line) {
			if k, v, ok := strings.Cut(f, "="); ok {
				kv[k] = v
			}
		}
		var p pull
		p.Ref = kv["ref"]
		p.Layers, _ = strconv.Atoi(kv["layers"])
		p.LayersDownloaded, _ = strconv.Atoi(kv["layersDownloaded"])
		p.Bytes, _ = strconv.ParseInt(kv["bytesDownloaded"], 10, 64)
		p.Unpacked = kv["unpacked"] == "true"
		p.Download, _ = strconv.ParseFloat(kv["downloadSeconds"], 64)
		p.Seconds, _ = strconv.ParseFloat(kv["seconds"], 64)
		out = append(out, p)
	}
	return out
}
