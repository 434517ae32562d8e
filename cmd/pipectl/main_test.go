package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/root"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"pipectl": func() { os.Exit(root.Main(os.Args[1:])) },
	})
}

// TestScripts runs the CLI sessions in testdata/script: each reads like a
// user's session with pipectl.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PIPECTL_ARTIFACTS", "")
			return nil
		},
	})
}
