package gang

import (
	"context"
	"strings"
	"testing"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/execution"
	"pipectl.dev/pipectl/pipeline/gang/progress"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
)

// TestExecNodeEchoesMetrics: the metrics a pod's ranks report reach the
// pod's log as progress reports, the last of each rank with its last step
// and line count; a malformed line is counted and skipped, and said.
func TestExecNodeEchoesMetrics(t *testing.T) {
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	topo := rankenv.Topology{Nodes: 2, ProcsPerNode: 2, MasterAddr: "m", MasterPort: 1}
	script := `m="$` + wire.EnvMetrics + `"; for s in 1 2 3; do echo "{\"step\": $s, \"loss\": 0.$RANK}" >> "$m"; done; echo "loss=0.5" >> "$m"; echo done`
	req, out := nodeRequest(t, store, script)
	if _, err := ExecNode(context.Background(), &execution.Runtime{Store: store}, req, rankenv.Node{Topology: topo, Index: 1}); err != nil {
		t.Fatalf("node 1: %v; log:\n%s", err, out)
	}
	log := out.String()
	last := map[int]progress.Report{}
	for _, line := range strings.Split(log, "\n") {
		if r, ok, err := progress.ParseReport([]byte(line)); ok {
			if err != nil {
				t.Fatalf("report %q: %v", line, err)
			}
			last[r.Rank] = r
		}
	}
	for _, rank := range []int{2, 3} {
		r := last[rank]
		if r.Lines != 4 || r.Malformed != 1 || r.Step == nil || *r.Step != 3 || r.Last["loss"] != float64(rank)/10 {
			t.Errorf("rank %d's last report %+v, want 4 lines, 1 malformed, step 3, loss 0.%d; log:\n%s", rank, r, rank, log)
		}
		if want := "pipectl: rank " + string(rune('0'+rank)) + ": skipped 1 malformed metric line(s) of 4 in rank-"; !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if len(last) != 2 {
		t.Errorf("reports of ranks %v, want 2 and 3", last)
	}
}
