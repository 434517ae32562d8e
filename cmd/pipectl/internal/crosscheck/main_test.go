package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A module whose package calls a function only its _linux.go file defines
// checks clean for linux/arm64 and fails for darwin/arm64, naming the file
// and the undefined name.
func TestCheckFindsWhatOnePlatformLacks(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"go.mod":        "module example.test/m\n\ngo 1.22\n",
		"m.go":          "package m\n\nfunc Use() int { return onlyLinux() }\n",
		"m_linux.go":    "package m\n\nfunc onlyLinux() int { return 1 }\n",
		"sub/sub.go":    "package sub\n\nimport \"example.test/m\"\n\nvar X = m.Use()\n",
		"sub/sub_ok.go": "package sub\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	n, errs, err := check("linux/arm64", []string{"./sub"})
	if err != nil || len(errs) != 0 || n != 2 {
		t.Fatalf("linux/arm64: %d packages, errors %q, %v; want 2 packages, none", n, errs, err)
	}
	_, errs, err = check("darwin/arm64", []string{"./sub"})
	if err != nil || len(errs) != 1 || !strings.Contains(errs[0], "m.go:3") || !strings.Contains(errs[0], "onlyLinux") {
		t.Fatalf("darwin/arm64: errors %q, %v; want one at m.go:3 naming onlyLinux", errs, err)
	}
	if _, _, err := check("darwin", []string{"./sub"}); err == nil {
		t.Error("platform \"darwin\" (no ARCH) was taken")
	}
}
