package main

import (
	"os"
	"strings"
	"testing"
)

// TestVersionVar: the linker variable mkimage sets is the one make build
// sets (the Makefile's LDFLAGS), so `pipectl version` in the image prints
// the version given.
func TestVersionVar(t *testing.T) {
	mk, err := os.ReadFile("../../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if want := "-X " + versionVar() + "=$(VERSION)"; !strings.Contains(string(mk), want) {
		t.Errorf("the Makefile's LDFLAGS lack %q", want)
	}
}
