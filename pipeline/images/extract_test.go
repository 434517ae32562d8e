package images

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/pipeline/images/modelcartest"
)

// TestExtract pulls a ModelCar image from a real registry and writes its
// /models folder, the layers applied in order (a file replaced, one
// deleted by a whiteout), nothing else of the image.
func TestExtract(t *testing.T) {
	ctx := context.Background()
	reg := serve(t)
	ref := reg + "/modelcar:test"
	digest, err := modelcartest.Push(ref, []map[string]string{
		{"models/": "", "models/config.json": `{"a": 1}`, "models/old.bin": "old", "models/sub/w.bin": "w1", "etc/passwd": "root"},
		{"models/sub/w.bin": "w2", "models/.wh.old.bin": ""},
	})
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "models")
	pinned, err := Extract(ctx, ref, ModelDir, dest, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := reg + "/modelcar@" + digest; pinned != want {
		t.Errorf("Extract = %s, want %s", pinned, want)
	}
	got := map[string]string{}
	err = filepath.WalkDir(dest, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dest, p)
		got[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"config.json": `{"a": 1}`, "sub/w.bin": "w2"}, got); diff != "" {
		t.Errorf("extracted files (-want +got):\n%s", diff)
	}
	// An image without /models, and one with a link in it.
	if _, err := modelcartest.Push(reg+"/plain:1", []map[string]string{{"etc/x": "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := Extract(ctx, reg+"/plain:1", ModelDir, filepath.Join(t.TempDir(), "m"), Options{}); err == nil || !strings.Contains(err.Error(), "no folder /models (a ModelCar image keeps its model there)") {
		t.Errorf("an image without /models: %v", err)
	}
	if _, err := Extract(ctx, reg+"/none:1", ModelDir, filepath.Join(t.TempDir(), "m"), Options{}); err == nil || !strings.Contains(err.Error(), reg+"/none:1") {
		t.Errorf("a missing image: %v", err)
	}
}
