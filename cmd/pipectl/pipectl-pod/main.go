// Command pipectl-pod is pipectl's pod runtime: `exec` and `launch`, what
// the pods of a compiled workflow run, in a binary without the compiler,
// the Argo client, the importers' commands and the UI. The pipectl image
// holds it beside pipectl; a step pod's init container copies it.
package main

import (
	"os"

	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/podroot"
)

func main() {
	os.Exit(podroot.Main(os.Args[1:]))
}
