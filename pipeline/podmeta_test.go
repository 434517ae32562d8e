package pipeline

import (
	"strings"
	"testing"
)

// TestPodMetadataChecks: a step's podMetadata is checked as Kubernetes
// would check the pod's, without pipectl's and Argo's own keys, without {{
// in an annotation (Argo would evaluate it), not on a distributed step.
func TestPodMetadataChecks(t *testing.T) {
	const head = `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: m}
steps:
  - name: s
    component: {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: c}, command: [p]}
`
	if _, err := Parse("ok.yaml", []byte(head+`    podMetadata: {labels: {team: ml, example.com/tier: a-b}, annotations: {note: "it's $(x) \"y\""}}
`)); err != nil {
		t.Fatal(err)
	}
	for meta, want := range map[string]string{
		`{labels: {team: "a b"}}`:                       `steps[0].podMetadata.labels.team: invalid label value "a b"`,
		`{labels: {"-x": a}}`:                           `steps[0].podMetadata.labels.-x: invalid key "-x"`,
		`{annotations: {workflows.argoproj.io/x: a}}`:   `key "workflows.argoproj.io/x" is pipectl's or Argo's own`,
		`{annotations: {pipectl.dev/pipeline: a}}`:      `key "pipectl.dev/pipeline" is pipectl's or Argo's own`,
		`{annotations: {note: "{{workflow.name}}"}}`:    `steps[0].podMetadata.annotations.note: an annotation value holding {{ is not supported`,
		"{labels: {a: b}}\n    distributed: {nodes: 2}": `steps[0].podMetadata: podMetadata is not supported on a distributed step yet`,
	} {
		_, err := Parse("bad.yaml", []byte(head+"    podMetadata: "+meta+"\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", meta, err, want)
		}
	}
}
