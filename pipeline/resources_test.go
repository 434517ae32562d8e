package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// TestRuntimeResourceValues: what a resource given at run time may be.
func TestRuntimeResourceValues(t *testing.T) {
	for _, tc := range []struct {
		field, value string
		ok           bool
	}{
		{"cpu", "", true}, {"cpu", "500m", true}, {"cpu", "2", true}, {"cpu", "1.5", true}, {"cpu", ".5", true}, {"cpu", "4000m", true},
		{"memory", "15G", true}, {"memory", "4Gi", true}, {"memory", "1e3", true}, {"memory", "1E-2", true},
		{"cpu", "-1", false}, {"cpu", "+1", false}, {"cpu", " 1", false}, {"cpu", "1 ", false}, {"memory", "4gi", false}, {"memory", "4K", false},
		{"memory", "1e100", false}, {"cpu", "{{workflow.name}}", false}, {"cpu", "$(X)", false}, {"cpu", `1"`, false}, {"cpu", "abc", false},
		{"gpu", "0", true}, {"gpu", "1024", true}, {"gpu", "0001", true}, {"gpu", "1025", false}, {"gpu", "-1", false}, {"gpu", "1.0", false}, {"gpu", "two", false},
		{"gpuResource", "nvidia.com/gpu", true}, {"gpuResource", "amd.com/gpu", true}, {"gpuResource", "example.com/My_GPU.v2", true},
		{"gpuResource", "NVIDIA_TESLA_P4", false}, {"gpuResource", "kubernetes.io/gpu", false}, {"gpuResource", "a.kubernetes.io/gpu", false},
		{"gpuResource", "nvidia.com/gpu/x", false}, {"gpuResource", "Nvidia.com/gpu", false}, {"gpuResource", "x.com/" + strings.Repeat("a", 64), false},
		{"gpuResource", strings.Repeat("a", 240) + ".com/gpu", false},
	} {
		err := CheckRuntimeResource(tc.field, tc.value)
		if (err == nil) != tc.ok {
			t.Errorf("%s %q: %v, want ok %v", tc.field, tc.value, err, tc.ok)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "resources."+tc.field+": ") {
			t.Errorf("%s %q: %v, want it to name the field", tc.field, tc.value, err)
		}
	}
}

// TestRuntimeQuantitiesParse: every quantity pipectl accepts at run time
// is one Kubernetes parses, and not negative.
func TestRuntimeQuantitiesParse(t *testing.T) {
	var n int
	for _, mant := range []string{"0", "7", "12345678901234567890", "1.", "1.5", ".25", "0.000000001"} {
		for _, suffix := range []string{"", "e0", "e99", "E-99", "e+5", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E"} {
			v := mant + suffix
			if CheckRuntimeResource(ResourceCPU, v) != nil {
				continue
			}
			n++
			q, err := resource.ParseQuantity(v)
			if err != nil || q.Sign() < 0 {
				t.Errorf("%q: accepted, but Kubernetes reads %v, %v", v, q.String(), err)
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d quantities accepted", n)
	}
}

// TestResourceRefs: resources given at run time by a param or a step's
// output are checked when the file loads: a param or output of a type that
// holds the value, one value (not a loop's list), not on a distributed
// step; the step waits for the output's step.
func TestResourceRefs(t *testing.T) {
	const head = `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: r}
params:
  cpu: {type: string, default: "1"}
  on: {type: bool, default: true}
steps:
  - name: out
    component: &o {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: o}, command: [p, "{{outputs.s.path}}", "{{outputs.j.path}}", "{{outputs.d.path}}"], outputs: [{name: s, type: string}, {name: j, type: json}, {name: d, type: Dataset}]}
  - name: each
    loop: {items: [1, 2]}
    component: *o
  - name: use
    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: c}, command: [p]}
`
	p, err := Parse("ok.yaml", []byte(head+`    resources: {cpu: "{{params.cpu}}", memory: "{{steps.out.outputs.s}}", gpu: "2"}
`))
	if err != nil {
		t.Fatal(err)
	}
	s := p.Step("use")
	if got := fmt.Sprint(s.Deps()); got != "[out]" {
		t.Errorf("deps %s, want [out]", got)
	}
	if got := fmt.Sprint(s.Resources.Refs()); got != "map[cpu:{{params.cpu}} memory:{{steps.out.outputs.s}}]" {
		t.Errorf("refs %s", got)
	}
	for res, want := range map[string]string{
		`{cpu: "{{params.nope}}"}`:                 `resources.cpu: unknown parameter "nope"`,
		`{cpu: "{{params.on}}"}`:                   `resources.cpu: parameter "on" is bool: resources.cpu is a quantity (string, int, float)`,
		`{gpuResource: "{{steps.out.outputs.j}}"}`: `resources.gpuResource: output "j" of step "out" is json: resources.gpuResource is a resource name (string)`,
		`{memory: "{{steps.out.outputs.d}}"}`:      `resources.memory: output "d" of step "out" is Dataset`,
		`{memory: "{{steps.each.outputs.s}}"}`:     `resources.memory: output "s" of loop step "each" is collected into a JSON list`,
		`{memory: "{{steps.out.outputs.x}}"}`:      `steps[2].resources.memory: step "out" (component o) has no output "x"`,
		`{gpu: "2.0"}`:                             `resources.gpu: expected 0 to 1024 GPUs, got "2.0"`,
		`{gpu: "{{params.cpu}}"}`:                  ``,
		`{cpu: "{{params.cpu}}m"}`:                 `resources.cpu: expected a quantity`,
	} {
		_, err := Parse("bad.yaml", []byte(head+"    resources: "+res+"\n"))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", res, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want %q", res, err, want)
		}
	}
	_, err = Parse("dist.yaml", []byte(head+`    resources: {cpu: "{{params.cpu}}"}
    distributed: {nodes: 2}
`))
	if err == nil || !strings.Contains(err.Error(), "resources.cpu: a distributed step's resources are written in the file") {
		t.Errorf("distributed: %v, want a refusal", err)
	}
}

// TestResourceRefsNested: a nested pipeline's step given its resources by
// the pipeline's params gets what the step using the pipeline gives: an
// outer param, a step's output, or a literal (then checked as a value).
func TestResourceRefsNested(t *testing.T) {
	dir := t.TempDir()
	inner := `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: inner}
params:
  cpu: {type: string}
  mem: {type: string}
steps:
  - name: work
    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: c}, command: [p]}
    resources: {cpu: "{{params.cpu}}", memory: "{{params.mem}}"}
`
	if err := os.WriteFile(filepath.Join(dir, "inner.yaml"), []byte(inner), 0o644); err != nil {
		t.Fatal(err)
	}
	outer := func(cpu, mem string) string {
		return `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: outer}
params:
  c: {type: string, default: "1"}
steps:
  - name: out
    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: o}, command: [p, "{{outputs.s.path}}"], outputs: [{name: s, type: string}]}
  - name: sub
    component: inner.yaml
    inputs: {cpu: "` + cpu + `", mem: "` + mem + `"}
`
	}
	p, err := Parse(filepath.Join(dir, "outer.yaml"), []byte(outer("{{params.c}}", "{{steps.out.outputs.s}}")))
	if err != nil {
		t.Fatal(err)
	}
	s := p.Step("sub.work")
	if got := fmt.Sprint(s.Resources.Refs()); got != "map[cpu:{{params.c}} memory:{{steps.out.outputs.s}}]" {
		t.Errorf("refs %s", got)
	}
	if got := fmt.Sprint(s.Deps()); got != "[out]" {
		t.Errorf("deps %s, want [out]", got)
	}
	p, err = Parse(filepath.Join(dir, "outer.yaml"), []byte(outer("500m", "2Gi")))
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Step("sub.work").Resources; r.CPU != "500m" || r.Memory != "2Gi" || len(r.Refs()) != 0 {
		t.Errorf("resources %+v, want 500m and 2Gi written", r)
	}
	_, err = Parse(filepath.Join(dir, "outer.yaml"), []byte(outer("lots", "2Gi")))
	if want := `steps[1].component: step sub.work: resources.cpu: "lots" is not a quantity`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err %v, want %q", err, want)
	}
}
