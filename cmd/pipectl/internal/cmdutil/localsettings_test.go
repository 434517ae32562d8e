package cmdutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFindLocalSettings(t *testing.T) {
	top := t.TempDir()
	deep := filepath.Join(top, "examples", "attrition")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if s, err := FindLocalSettings(deep); err != nil || s != nil {
		t.Fatalf("no file: got %+v, %v; want nil, nil", s, err)
	}
	file := filepath.Join(top, LocalSettingsFile)
	if err := os.WriteFile(file, []byte("# a comment\npath: [/opt/py/bin, venv/bin]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := FindLocalSettings(deep)
	if err != nil {
		t.Fatal(err)
	}
	want := &LocalSettings{File: file, Path: []string{"/opt/py/bin", filepath.Join(top, "venv/bin")}}
	if d := cmp.Diff(want, s); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	if err := os.WriteFile(file, []byte("pth: [/x]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := FindLocalSettings(deep); err == nil || !strings.Contains(err.Error(), "field pth not found") || !strings.Contains(err.Error(), file) {
		t.Errorf("unknown field: got %v, want an error naming the file and the field", err)
	}
}
