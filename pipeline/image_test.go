package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImageRefusedAsCompileDoes: validate refuses the images compile
// refuses (a newline, braces, $, a space), at the file, line and field.
func TestImageRefusedAsCompileDoes(t *testing.T) {
	for _, c := range []struct{ step, comp, field string }{
		{"", `"busybox\n:1"`, "steps[0].component.image"},
		{"", `"busybox:{{params.tag}}"`, "steps[0].component.image"},
		{`"busybox:$TAG"`, "busybox:1", "steps[0].image"},
		{`"a b"`, "busybox:1", "steps[0].image"},
	} {
		src := "apiVersion: pipectl.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: img}\nsteps:\n  - name: s\n"
		if c.step != "" {
			src += "    image: " + c.step + "\n"
		}
		src += "    component:\n      metadata: {name: c}\n      image: " + c.comp + "\n      command: [echo, hi]\n"
		path := filepath.Join(t.TempDir(), "p.yaml")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), path+":") || !strings.Contains(err.Error(), c.field+": ") ||
			!strings.Contains(err.Error(), "an image reference has no spaces, braces or $") {
			t.Errorf("image %s / %s: %v, want refused at %s", c.step, c.comp, err, c.field)
		}
	}
}
