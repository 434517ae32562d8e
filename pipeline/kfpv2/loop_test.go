package kfpv2

import (
	"fmt"
	"strings"
	"testing"
)

// TestLoopBounds: ParallelFors whose bodies each hold two ParallelFors
// over the next body double the steps at every level; past the bounds
// the conversion stops with an error instead of making them all.
func TestLoopBounds(t *testing.T) {
	const levels = 16
	var b strings.Builder
	b.WriteString("components:\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "  comp-body-%d:\n    dag:\n      tasks:\n", i)
		for _, name := range []string{"a", "b"} {
			if i == levels {
				fmt.Fprintf(&b, "        %s:\n          componentRef:\n            name: comp-echo\n", name)
				continue
			}
			fmt.Fprintf(&b, "        %s:\n          componentRef:\n            name: comp-body-%d\n          parameterIterator:\n            itemInput: it-%d\n            items:\n              raw: '[1, 2]'\n", name, i+1, i+1)
		}
	}
	b.WriteString(`  comp-echo:
    executorLabel: exec-echo
deploymentSpec:
  executors:
    exec-echo:
      container:
        command: [echo]
        image: busybox
pipelineInfo:
  name: bounds
root:
  dag:
    tasks:
      top:
        componentRef:
          name: comp-body-1
        parameterIterator:
          itemInput: it-1
          items:
            raw: '[1, 2]'
schemaVersion: 2.1.0
`)
	f, err := Parse("bounds.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Convert(f)
	if err == nil {
		t.Fatal("converted")
	}
	for _, want := range []string{"become more than 10000 loop steps", "loop over more than 10000 items together"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %.500s", want, err)
		}
	}
}
