package plan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
)

func ptrTo[T any](v T) *T { return &v }

// TestLoopInvocation evaluates every iteration of each kind of loop and a
// consumer of collected outputs.
func TestLoopInvocation(t *testing.T) {
	p, err := pipeline.Load("../testdata/loops/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	params, err := p.ResolveParams(nil)
	if err != nil {
		t.Fatal(err)
	}
	type iter struct {
		Step   string
		Params map[string]string
		Env    []string
	}
	tests := []struct {
		step     string
		upstream map[string]string
		want     []iter
	}{
		{"literal", nil, []iter{
			{"literal[0]", map[string]string{"lr": "0.10", "tag": "t-x"}, nil},
			{"literal[1]", map[string]string{"lr": "1e-3", "tag": "t-y z"}, nil},
		}},
		{"byparam", nil, []iter{
			{"byparam[0]", map[string]string{"lr": "0.1", "tag": "a"}, []string{`ITEM={"lr":0.1,"tag":"a"}`}},
			{"byparam[1]", map[string]string{"lr": "1.0", "tag": "b"}, []string{`ITEM={"lr":1.0,"tag":"b"}`}},
		}},
		{"byoutput", map[string]string{ItemsInput: `[ 2.50, "x" ]`}, []iter{
			{"byoutput[0]", map[string]string{"lr": "2.50"}, nil},
			{"byoutput[1]", map[string]string{"lr": "x"}, nil},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.step, func(t *testing.T) {
			sp, err := Build(p, tt.step)
			if err != nil {
				t.Fatal(err)
			}
			if sp.Loop == nil {
				t.Fatal("no Loop in the plan")
			}
			c, err := sp.Component.WithArgv(nil)
			if err != nil {
				t.Fatal(err)
			}
			v := Values{Run: "r", Params: params, Upstream: tt.upstream}
			items, err := sp.Wiring.ItemList(v)
			if err != nil {
				t.Fatal(err)
			}
			var got []iter
			for i := range items {
				v.Iteration = ptrTo(i)
				inv, err := sp.Wiring.Invocation(c, store, v)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, iter{inv.Step, inv.Params, inv.Env})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("iterations (-want +got):\n%s", diff)
			}
			v.Iteration = ptrTo(len(items))
			if _, err := sp.Wiring.Invocation(c, store, v); err == nil || !strings.Contains(err.Error(), "no iteration 2") {
				t.Errorf("iteration out of range: %v", err)
			}
			v.Iteration = nil
			if _, err := sp.Wiring.Invocation(c, store, v); err == nil || !strings.Contains(err.Error(), "want --iteration N") {
				t.Errorf("no iteration: %v", err)
			}
		})
	}

	t.Run("collected", func(t *testing.T) {
		sp, err := Build(p, "pick")
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]OutputRef{"scores": {Step: "literal", Output: "score"}, "models": {Step: "byparam", Output: "model"}}
		if diff := cmp.Diff(want, sp.Wiring.Collected); diff != "" {
			t.Errorf("Collected (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"byparam", "literal"}, sp.Deps); diff != "" {
			t.Errorf("Deps (-want +got):\n%s", diff)
		}
		c, err := sp.Component.WithArgv(nil)
		if err != nil {
			t.Fatal(err)
		}
		v := Values{Run: "r", Params: params, Collected: map[string][]record.OutputRecord{
			"scores": {
				{Name: "score", Type: "float", Value: ptrTo("1.0\n")},
				{Name: "score", Type: "float", Value: ptrTo("007")},
			},
			"models": {{Name: "model", Type: "Model", URI: "file:///s/r/byparam[0]/model"}, {Name: "model", Type: "Model", URI: "file:///s/r/byparam[1]/model"}},
		}}
		inv, err := sp.Wiring.Invocation(c, store, v)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]string{"scores": `[1.0,"007"]`}, inv.Params); diff != "" {
			t.Errorf("collected params (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string][]string{"models": {"file:///s/r/byparam[0]/model", "file:///s/r/byparam[1]/model"}}, inv.Collected); diff != "" {
			t.Errorf("collected artifacts (-want +got):\n%s", diff)
		}
	})

	t.Run("finally", func(t *testing.T) {
		sp, err := Build(p, "report")
		if err != nil {
			t.Fatal(err)
		}
		if !sp.Finally {
			t.Error("Finally not set")
		}
		c, err := sp.Component.WithArgv(nil)
		if err != nil {
			t.Fatal(err)
		}
		v := Values{Run: "r", Params: params, RunFields: map[string]string{"status": "Failed", "failedSteps": `["literal[1]"]`}}
		inv, err := sp.Wiring.Invocation(c, store, v)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := inv.Params["tag"], `Failed ["literal[1]"]`; got != want {
			t.Errorf("tag = %q, want %q", got, want)
		}
	})
}

func TestLoopWireRoundTrip(t *testing.T) {
	p, err := pipeline.Load("../testdata/loops/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"literal", "byparam", "pick", "byoutput", "report"} {
		sp, err := Build(p, step)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := wire.Encode(sp.Wiring)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeWiring(enc)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		want := *sp.Wiring
		want.Upstream = nil
		if diff := cmp.Diff(&want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: round trip (-want +got):\n%s", step, diff)
		}
	}
}
