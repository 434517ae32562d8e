// Command pipectl-pod is pipectl's pod runtime: `exec`, what every step and
// rank pod of a compiled workflow runs, in a binary without the compiler,
// the Argo and Kubernetes clients, the other commands and the UI. The
// pipectl image holds it beside pipectl; a pod's init container copies it.
package main

import (
	"os"

	"pipectl.dev/pipectl/cmd/internal/cmd/podroot"
)

func main() {
	os.Exit(podroot.Main(os.Args[1:]))
}
