package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kfpFanOut writes a KFP v2 IR whose root runs sub-DAG comp-d1, and each
// comp-dK (K < depth) runs comp-d(K+1) in two tasks: 2^depth leaf tasks
// from a file of a few KB.
func kfpFanOut(t *testing.T, depth, fan int) string {
	var b strings.Builder
	b.WriteString("components:\n")
	for k := 1; k <= depth; k++ {
		fmt.Fprintf(&b, "  comp-d%d:\n    dag:\n      tasks:\n", k)
		for j := range fan {
			ref := fmt.Sprintf("comp-d%d", k+1)
			if k == depth {
				ref = "comp-leaf"
			}
			fmt.Fprintf(&b, "        %c:\n          componentRef:\n            name: %s\n          taskInfo:\n            name: %c\n", 'a'+j, ref, 'a'+j)
		}
	}
	b.WriteString(`  comp-leaf:
    executorLabel: exec-leaf
deploymentSpec:
  executors:
    exec-leaf:
      container:
        command: [sh, -c, "true"]
        image: busybox
pipelineInfo:
  name: fan
root:
  dag:
    tasks:
      r:
        componentRef:
          name: comp-d1
        taskInfo:
          name: r
schemaVersion: 2.1.0
`)
	path := filepath.Join(t.TempDir(), "fan.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKFPFanOutBounded: a KFP file whose 30 levels of sub-DAGs each run
// the next twice (2^30 steps) is refused at the step bound, naming the
// file and the KFP field, having loaded each sub-DAG once per level (it
// used to load 2^30 of them for minutes first).
func TestKFPFanOutBounded(t *testing.T) {
	path := kfpFanOut(t, 30, 2)
	start := time.Now()
	_, err := Load(path)
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "nested pipelines expand to more than 10000 steps") || !strings.Contains(err.Error(), path+":") ||
		!strings.Contains(err.Error(), ": components.comp-d") {
		t.Fatalf("Load: %v, want the step bound at the file and KFP field", err)
	}
	if n := strings.Count(err.Error(), "\n") + 1; n > 40 {
		t.Errorf("%d lines of errors, want the bound said once per level at most", n)
	}
	t.Logf("refused in %v: %.300s", took, err)
}

// TestKFPDepthBounded: 40 levels of sub-DAGs (one task each) are refused
// past MaxNestingDepth, naming the file and the KFP field.
func TestKFPDepthBounded(t *testing.T) {
	path := kfpFanOut(t, 40, 1)
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("nested more than %d deep", MaxNestingDepth)) || !strings.Contains(err.Error(), path+":") {
		t.Fatalf("Load: %v, want the depth bound at the file", err)
	}
	t.Logf("%.400s", err)
	if _, err := Load(kfpFanOut(t, MaxNestingDepth-2, 1)); err != nil {
		t.Errorf("%d levels: %v", MaxNestingDepth-2, err)
	}
}
