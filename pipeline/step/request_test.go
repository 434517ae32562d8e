package step

import (
	"strings"
	"testing"
	"time"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/checkpoint"
	"pipectl.dev/pipectl/pipeline/plan"
)

// TestDecode: the decoded request names the iteration's step and decodes
// values; every bad flag is named.
func TestDecode(t *testing.T) {
	comp, _ := wire.Encode(&components.Program{Version: components.ProgramVersion})
	step, _ := wire.Encode(&plan.Wiring{Version: wire.WiringVersion, Step: "train"})
	r, err := DecodeArgs(wire.Args{Run: "r1", Component: comp, Step: step, Iteration: "2", Params: []string{wire.Value("msg", "{{x}} $y")}, Cache: "on"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "train[2]" || r.Values.Params["msg"] != "{{x}} $y" || *r.Values.Iteration != 2 || r.Cache != "on" {
		t.Errorf("Decode = %+v", r)
	}
	r, err = DecodeArgs(wire.Args{Run: "r1", Component: comp, Step: step, CheckpointKeep: "3", CheckpointEvery: "30s", ResumeFrom: "r0"})
	if want := (checkpoint.Options{Keep: 3, Every: 30 * time.Second, From: "r0"}); err != nil || r.Checkpoint != want {
		t.Errorf("Decode of the checkpoint flags = %+v, %v; want %+v", r.Checkpoint, err, want)
	}
	_, err = DecodeArgs(wire.Args{Component: "x", Step: step, Iteration: "-1", Params: []string{"novalue"}, Cache: "sometimes", CheckpointKeep: "0", CheckpointEvery: "often"})
	for _, want := range []string{"--component", "--iteration", "--param", "--cache", "--checkpoint-keep", "--checkpoint-every"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Decode of bad flags = %v, want %s named", err, want)
		}
	}
}
