package launcher

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// TestCollectOutputs: the outputs rank 0 published are found in its
// outputs record and the output parameters written; a missing one fails,
// named.
func TestCollectOutputs(t *testing.T) {
	ctx := context.Background()
	store, _ := artifacts.NewLocal(t.TempDir())
	outputs := []components.ProgramIO{{Name: "model", Type: "Model"}, {Name: "loss", Type: "float"}}

	_, err := CollectOutputs(ctx, store, "run-1", "train", outputs, "")
	var me *MissingOutputsError
	if !errors.As(err, &me) || strings.Join(me.Outputs, ",") != "model,loss" || !strings.Contains(err.Error(), "no outputs record") {
		t.Fatalf("CollectOutputs with nothing published = %v, want model and loss missing", err)
	}

	model := record.OutputRecord{Name: "model", Type: "Model", URI: store.URI("run-1/train/model"), Size: 7}
	if err := recordstore.WriteOutputs(ctx, store, "run-1", "train", []record.OutputRecord{model}); err != nil {
		t.Fatal(err)
	}
	_, err = CollectOutputs(ctx, store, "run-1", "train", outputs, "")
	if !errors.As(err, &me) || strings.Join(me.Outputs, ",") != "loss" || !strings.Contains(err.Error(), "not in its outputs record") {
		t.Fatalf("CollectOutputs with a record without loss = %v, want loss missing", err)
	}

	v := "0.25"
	if err := recordstore.WriteOutputs(ctx, store, "run-1", "train", []record.OutputRecord{model, {Name: "loss", Type: "float", Value: &v}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	records, err := CollectOutputs(ctx, store, "run-1", "train", outputs, dir)
	if err != nil || len(records) != 2 {
		t.Fatalf("CollectOutputs = %v, %v", records, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "loss")); string(b) != "0.25" {
		t.Errorf("output parameter loss = %q", b)
	}
}
