package argo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipectl.dev/pipectl/pipeline"
)

// generated writes a pipeline of n steps: a source, then layers of steps
// each reading an artifact and a parameter of an earlier step (a binary
// tree of dependencies), using three components and two pipeline params.
func generated(tb testing.TB, n int) *pipeline.Pipeline {
	tb.Helper()
	dir := tb.TempDir()
	for name, body := range map[string]string{
		"source.yaml": `apiVersion: pipectl.dev/v1alpha1
kind: Component
metadata: {name: source}
inputs: [{name: rows, type: int}]
outputs: [{name: data, type: Dataset}, {name: n, type: int}]
image: example/bench:1
command: [python3, source.py, --rows, "{{inputs.rows}}", --out, "{{outputs.data.path}}", --n, "{{outputs.n.path}}"]
`,
		"map.yaml": `apiVersion: pipectl.dev/v1alpha1
kind: Component
metadata: {name: map}
inputs: [{name: data, type: Dataset}, {name: n, type: int}, {name: seed, type: int}, {name: label, type: string, default: x}]
outputs: [{name: data, type: Dataset}, {name: n, type: int}]
image: example/bench:1
command: [python3, map.py, "{{inputs.data.path}}", "{{inputs.n}}", "{{inputs.seed}}", "{{inputs.label}}", "{{outputs.data.path}}", "{{outputs.n.path}}"]
`,
		"reduce.yaml": `apiVersion: pipectl.dev/v1alpha1
kind: Component
metadata: {name: reduce}
inputs: [{name: a, type: Dataset}, {name: b, type: Dataset}]
outputs: [{name: data, type: Dataset}, {name: n, type: int}]
image: example/bench:1
command: [python3, reduce.py, "{{inputs.a.path}}", "{{inputs.b.path}}", "{{outputs.data.path}}", "{{outputs.n.path}}"]
`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	var b strings.Builder
	b.WriteString("apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: bench}\n")
	b.WriteString("params:\n  rows: {type: int, default: 1000}\n  seed: {type: int, default: 1}\nsteps:\n")
	b.WriteString("  - {name: s0, component: source.yaml, inputs: {rows: \"{{params.rows}}\"}}\n")
	for i := 1; i < n; i++ {
		up := (i - 1) / 2
		if i%5 == 0 && i >= 2 {
			fmt.Fprintf(&b, "  - {name: s%d, component: reduce.yaml, inputs: {a: \"{{steps.s%d.outputs.data}}\", b: \"{{steps.s%d.outputs.data}}\"}}\n", i, up, i-1)
			continue
		}
		fmt.Fprintf(&b, "  - {name: s%d, component: map.yaml, inputs: {data: \"{{steps.s%d.outputs.data}}\", n: \"{{steps.s%d.outputs.n}}\", seed: \"{{params.seed}}\", label: \"step %d\"}, retries: 1}\n", i, up, up, i)
	}
	path := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	p, err := pipeline.Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// BenchmarkCompile reports the time to compile and marshal n-step
// pipelines, and the YAML's size in bytes and bytes per step.
func BenchmarkCompile(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			p := generated(b, n)
			var size int
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				wf, err := Compile(p, testOptions())
				if err != nil {
					b.Fatal(err)
				}
				out, err := Marshal(wf)
				if err != nil {
					b.Fatal(err)
				}
				size = len(out)
			}
			b.ReportMetric(float64(size), "bytes")
			b.ReportMetric(float64(size)/float64(n), "bytes/step")
		})
	}
}

// TestLargePipelineSize keeps a 1000-step workflow under etcd's object
// limit (1 MB) and at most 1 KB per step, and valid for Argo.
func TestLargePipelineSize(t *testing.T) {
	if testing.Short() {
		t.Skip("large")
	}
	const n = 1000
	wf, out := compileFile(t, generated(t, n).Source, testOptions())
	lint(t, wf)
	if len(out) > 1<<20 {
		t.Errorf("%d steps: %d bytes, over 1 MB", n, len(out))
	}
	if per := len(out) / n; per > 1024 {
		t.Errorf("%d steps: %d bytes per step, want at most 1024", n, per)
	}
	t.Logf("%d steps: %d bytes (%d per step), %d templates", n, len(out), len(out)/n, len(wf.Spec.Templates))
}
