package buildinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionVar: VersionVar names Version — a program built with it set
// prints the version given — and the Makefile's LDFLAGS set it.
func TestVersionVar(t *testing.T) {
	mk, err := os.ReadFile("../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if want := "-X " + VersionVar + "=$(VERSION)"; !strings.Contains(string(mk), want) {
		t.Errorf("the Makefile's LDFLAGS lack %q", want)
	}
	bin := filepath.Join(t.TempDir(), "print")
	build := exec.Command("go", "build", "-o", bin, "-ldflags", "-X "+VersionVar+"=v9.8.7", "./testdata/print")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil || string(out) != "v9.8.7" {
		t.Errorf("the program built with -X %s=v9.8.7 prints %q (%v)", VersionVar, out, err)
	}
}
