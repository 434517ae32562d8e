package recordstore

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

// TestIndentShallow: to its depth, IndentShallow is json.Indent; deeper
// values stay compact, so a record with a loop item nested 9,000 deep
// stays the item's size (it was 162 MB, indentation quadratic in depth).
func TestIndentShallow(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `{"a":1}`, `[1,2,[3,{}],[]]`,
		`{"id":"r","steps":[{"name":"a\"[{,:","outputs":[{"name":"x","uri":"s3://b/k"}],"item":{"lr":0.1}}],"params":{}}`,
	} {
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(in), "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := artifacts.IndentShallow([]byte(in), 100); string(got) != want.String() {
			t.Errorf("IndentShallow(%s) =\n%s\nwant\n%s", in, got, want.String())
		}
		if got := artifacts.IndentShallow([]byte(in), 0); string(got) != in {
			t.Errorf("IndentShallow(%s, 0) = %s", in, got)
		}
	}
	ctx := context.Background()
	s, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	item := strings.Repeat("[", 9000) + strings.Repeat("]", 9000)
	r := &record.Run{ID: "r1", Status: record.StatusSucceeded, Steps: []record.StepRecord{{Name: "a[0]", Status: record.StatusSucceeded, Item: json.RawMessage(item)}}}
	if err := WriteRun(ctx, s, r); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(s.Dir(), "r1", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > 64<<10 {
		t.Errorf("run.json with a 9,000-deep item is %d bytes, want under 64 KiB (the item is %d)", st.Size(), len(item))
	}
	got, err := ReadRun(ctx, s, "r1")
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, got.Steps[0].Item); err != nil || compact.String() != item {
		t.Errorf("the item read back differs: %v", err)
	}
}
