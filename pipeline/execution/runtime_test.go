package execution

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// Publish writes the step's outputs record once every output is stored:
// each output with its declared type, a parameter with its value. A step
// that missed an output gets no record.
func TestPublishWritesTheOutputsRecord(t *testing.T) {
	ctx := t.Context()
	store, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rt := &Runtime{Store: store}
	inv := &components.Invocation{Run: "run-1", Step: "train", Component: &components.Program{
		Name:    "train",
		Outputs: []components.ProgramIO{{Name: "model", Type: components.TypeModel}, {Name: "epochs", Type: components.TypeInt}, {Name: "loss", Type: components.TypeFloat}},
	}}
	ws := Workspace{Dir: t.TempDir()}
	dir := ws.OutputDir(0)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("model", "weights")
	write("epochs", "3\n")

	if _, err := rt.Publish(ctx, inv, ws); err == nil {
		t.Fatal("Publish without loss succeeded")
	}
	if _, err := recordstore.ReadOutputs(ctx, store, "run-1", "train"); !errors.Is(err, artifacts.ErrNotFound) {
		t.Fatalf("outputs record of a step that missed an output: %v, want none", err)
	}

	write("loss", "0.25")
	records, err := rt.Publish(ctx, inv, ws)
	if err != nil {
		t.Fatal(err)
	}
	got, err := recordstore.ReadOutputs(ctx, store, "run-1", "train")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(records, got); diff != "" {
		t.Errorf("outputs record differs from what Publish returned (-want +got):\n%s", diff)
	}
	str := func(s string) *string { return &s }
	want := []record.OutputRecord{
		{Name: "model", Type: components.TypeModel, URI: store.URI("run-1/train/model"), Size: 7},
		{Name: "epochs", Type: components.TypeInt, Value: str("3")},
		{Name: "loss", Type: components.TypeFloat, Value: str("0.25")},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(record.OutputRecord{}, "SHA256")); diff != "" {
		t.Errorf("outputs record (-want +got):\n%s", diff)
	}
}
