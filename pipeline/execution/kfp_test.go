package execution

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/kfpv1"
	"pipectl.dev/pipectl/components/yamlfile"
)

// TestKFPRunFiles runs a KFP component through the runtime: a value read
// through inputPath arrives in a file, an output written at its fileOutputs
// path is published.
func TestKFPRunFiles(t *testing.T) {
	dir := t.TempDir()
	text := strings.ReplaceAll(`
name: files
inputs: [{name: Object, type: JsonObject}]
outputs: [{name: Size, type: Integer}]
implementation:
  container:
    image: alpine
    command: [sh, -c, 'wc -c < "$0" | tr -d " " > OUT', {inputPath: Object}]
    fileOutputs: {Size: OUT}
`, "OUT", filepath.Join(dir, "out", "size"))
	yf, err := yamlfile.Parse("c.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := kfpv1.Decode(yf, yf.Root, "")
	if err != nil {
		t.Fatal(err)
	}
	prog, err := c.Program()
	if err != nil {
		t.Fatal(err)
	}
	store, err := artifacts.NewLocal(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	rt := &Runtime{Store: store}
	inv := &components.Invocation{Component: prog, Run: "r1", Step: "files", Params: map[string]string{"object": `{"k": [1, 2.0]}`}}
	ws := Workspace{Dir: filepath.Join(dir, "ws")}
	v, err := rt.Prepare(t.Context(), inv, ws)
	if err != nil {
		t.Fatal(err)
	}
	records, err := rt.RunOnce(t.Context(), inv, ws, v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 1 || records[0].Value == nil || *records[0].Value != "15" {
		t.Fatalf("records = %+v (value %q), want size 15", records, *records[0].Value)
	}
	if b, err := os.ReadFile(ws.InputPath("object")); err != nil || string(b) != `{"k": [1, 2.0]}` {
		t.Errorf("value file = %q, %v", b, err)
	}
}
