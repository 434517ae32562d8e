package plan

import (
	"encoding/base64"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	"pipectl.dev/pipectl/components/componentstest"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
)

// gangStep makes distributedYAML's step a gang with every field set.
const gangStep = "    distributed: {nodes: 2, procsPerNode: 2, shmSize: 1Gi, resources: {memory: 4Gi, gpu: 1}, tolerations: [{key: k, operator: Exists}]}\n"

// FuzzDecode: any JSON given as --component, --step or --distributed
// decodes or gives an error, without a panic; what decodes encodes to text
// that decodes to the same value (the wire form round-trips).
func FuzzDecode(f *testing.F) {
	var steps []*Step
	for _, text := range []string{pipelineYAML, distributedYAML(gangStep)} {
		p, err := pipeline.Parse(filepath.Join(f.TempDir(), "pipeline.yaml"), []byte(text))
		if err != nil {
			f.Fatal(err)
		}
		sp, err := Build(p, "train")
		if err != nil {
			f.Fatal(err)
		}
		steps = append(steps, sp)
	}
	sp, gang := steps[0], steps[1]
	l := &Launch{
		Version: wire.LaunchVersion, Pipeline: "p", Image: "i", PipectlImage: "pi", Timeout: pipeline.Duration{Duration: time.Hour}, Distributed: *gang.Distributed,
		Env: []corev1.EnvVar{{Name: "A", Value: "b"}, {Name: "S", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}}}},
	}
	for _, v := range []any{sp.Component, sp.Wiring, l} {
		s, err := wire.Encode(v)
		if err != nil {
			f.Fatal(err)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"v": 2, "nodes": 1e400}`))
	f.Add([]byte(`{"v": 2, "step": "s", "params": {"x": [{"lit": "a", "param": "b"}]}, "V": 3}`))
	f.Fuzz(func(t *testing.T, js []byte) {
		if len(js) > componentstest.MaxFuzzInput {
			return
		}
		s := base64.StdEncoding.EncodeToString(js)
		if c, err := DecodeComponent(s); err == nil {
			roundTrip(t, c, func(s string) (any, error) { return DecodeComponent(s) })
		}
		if w, err := DecodeWiring(s); err == nil {
			roundTrip(t, w, func(s string) (any, error) { return DecodeWiring(s) })
		}
		if l, err := DecodeLaunch(s); err == nil {
			roundTrip(t, l, func(s string) (any, error) { return DecodeLaunch(s) })
		}
	})
}

// roundTrip fails t unless v, encoded and decoded again, encodes the same.
func roundTrip(t *testing.T, v any, decode func(string) (any, error)) {
	t.Helper()
	s, err := wire.Encode(v)
	if err != nil {
		t.Fatalf("wire.Encode(%+v): %v", v, err)
	}
	back, err := decode(s)
	if err != nil {
		t.Fatalf("%T encodes to text that does not decode: %v", v, err)
	}
	s2, err := wire.Encode(back)
	if err != nil {
		t.Fatal(err)
	}
	if s2 != s {
		a, _ := base64.StdEncoding.DecodeString(s)
		b, _ := base64.StdEncoding.DecodeString(s2)
		t.Fatalf("%T does not round-trip (-first +second):\n%s", v, cmp.Diff(string(a), string(b)))
	}
}

// FuzzBuild: every step of any pipeline that loads builds into a plan or an
// error, without a panic; its component and wiring survive the wire form,
// and each literal input evaluates to its text with the parameters' values
// in place, byte for byte.
func FuzzBuild(f *testing.F) {
	componentstest.AddFiles(f, "../testdata/*.yaml", "../testdata/loops/*.yaml", "../../examples/attrition/pipeline.yaml")
	f.Add([]byte(pipelineYAML))
	f.Add([]byte(distributedYAML(gangStep)))
	path := filepath.Join("..", "testdata", "fuzz.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > componentstest.MaxFuzzInput {
			return
		}
		p, err := pipeline.Parse(path, data)
		if err != nil {
			return
		}
		params, _ := p.ResolveParams(nil)
		for name := range p.Params {
			if _, ok := params[name]; !ok {
				params[name] = "{{v}} $(V) " + name // any text, never parsed again
			}
		}
		runFields := map[string]string{pipeline.RunStatus: "Failed {{x}}", pipeline.RunFailedSteps: `["a[0]"]`}
		for _, s := range p.Steps {
			sp, err := Build(p, s.Name)
			if err != nil {
				continue
			}
			c, err := DecodeComponent(mustEncode(t, sp.Component))
			want := *sp.Component
			want.Dir = ""
			if err != nil || !cmp.Equal(&want, c, cmpopts.EquateEmpty()) {
				t.Fatalf("step %s: component does not survive the wire: %v\n%s", s.Name, err, cmp.Diff(&want, c, cmpopts.EquateEmpty()))
			}
			w, err := DecodeWiring(mustEncode(t, sp.Wiring))
			wantW := *sp.Wiring
			wantW.Upstream = nil
			if err != nil || !cmp.Equal(&wantW, w, cmpopts.EquateEmpty()) {
				t.Fatalf("step %s: wiring does not survive the wire: %v\n%s", s.Name, err, cmp.Diff(&wantW, w, cmpopts.EquateEmpty()))
			}
			for name, b := range s.Bindings() {
				if b.IsRef() {
					continue
				}
				texts, refs, err := pipeline.LiteralParts(b.Literal)
				if err != nil {
					t.Fatalf("step %s input %s: a loaded literal does not parse: %v", s.Name, name, err)
				}
				var want strings.Builder
				for i, r := range refs {
					want.WriteString(texts[i] + params[r.Param] + runFields[r.Run])
				}
				want.WriteString(texts[len(texts)-1])
				if slices.ContainsFunc(refs, func(r pipeline.LiteralRef) bool { return r.Item }) {
					continue // an iteration's item: see the loop tests
				}
				got, err := w.Params[name].Eval(Values{Params: params, RunFields: runFields})
				if err != nil || got != want.String() {
					t.Fatalf("step %s input %s = %q: evaluates to %q, %v; want %q", s.Name, name, b.Literal, got, err, want.String())
				}
			}
		}
	})
}

func mustEncode(t *testing.T, v any) string {
	t.Helper()
	s, err := wire.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
