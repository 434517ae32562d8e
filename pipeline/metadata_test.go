package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/components/yamlfile"
)

// TestMetadataSteps: an artifact param's metadata naming step outputs
// makes each step reading the param (an inner step of a nested pipeline
// too) wait for those steps, and no other step; a nested pipeline's
// output names the expanded step it is.
func TestMetadataSteps(t *testing.T) {
	p, err := Parse("testdata/nested/meta.yaml", []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: meta}
params:
  data:
    type: Dataset
    metadata: {rows: "n={{steps.st.outputs.count}}", "{{steps.make.outputs.count}}": x, n: 1.50}
steps:
  - name: make
    component: ../components/make-data.yaml
  - name: st
    component: stage.pipeline.yaml
    inputs: {rows: 1}
  - name: use
    component: train.pipeline.yaml
    inputs: {data: "{{params.data}}", lrs: "[1]"}
  - name: direct
    component: ../components/fit.yaml
    inputs: {data: "{{params.data}}", epochs: 1}
  - name: other
    component: ../components/fit.yaml
    inputs: {data: "{{steps.make.outputs.data}}", epochs: 1}
`))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	for step, want := range map[string][]string{
		"use.fit":   {"make", "st.data"},
		"use.sweep": {},
		"direct":    {"make", "st.data"},
		"other":     {"make"},
	} {
		if diff := cmp.Diff(want, p.Deps(step)); diff != "" {
			t.Errorf("Deps(%s) (-want +got):\n%s", step, diff)
		}
	}
	got, err := p.Params["data"].MetadataJSON()
	if want := `{"rows":"n={{steps.st.data.outputs.count}}","{{steps.make.outputs.count}}":"x","n":1.50}`; err != nil || got != want {
		t.Errorf("metadata %s (%v), want %s", got, err, want)
	}
}

// TestMetadataStepsNested: a nested pipeline's output that the metadata
// cannot embed — the first of several steps that ran (oneOf), a loop
// step's collected outputs — is an error at the param's metadata.
func TestMetadataStepsNested(t *testing.T) {
	for _, tc := range []struct{ ref, want string }{
		{"{{steps.br.outputs.count}}", `7:15 params.data.metadata: {{steps.br.outputs.count}} is the output of the first of several steps that ran (oneOf): an artifact parameter's metadata cannot use it`},
		{"{{steps.br.outputs.scores}}", `7:15 params.data.metadata: {{steps.br.outputs.scores}} is output "score" of loop step "br.sweep" (of the pipeline step "br" uses), collected into a JSON list`},
	} {
		_, err := Parse("testdata/nested/meta.yaml", []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: meta}
params:
  data:
    type: Dataset
    metadata: {a: "`+tc.ref+`"}
steps:
  - name: br
    component: branches.pipeline.yaml
  - name: direct
    component: ../components/fit.yaml
    inputs: {data: "{{params.data}}", epochs: 1}
`))
		errs := yamlfile.Split(err)
		var ye *yamlfile.Error
		if len(errs) != 1 || !errors.As(errs[0], &ye) {
			t.Fatalf("%s: got %v, want one error", tc.ref, err)
		}
		if loc := strings.Replace(strings.TrimPrefix(ye.Error(), "testdata/nested/meta.yaml:"), ": ", " ", 1); !strings.HasPrefix(loc, tc.want) {
			t.Errorf("%s: got\n  %s\nwant prefix\n  %s", tc.ref, loc, tc.want)
		}
	}
}
