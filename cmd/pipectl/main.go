// Command pipectl runs ML pipelines kept as YAML: locally, or compiled to Argo Workflows.
package main

import (
	"os"

	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/root"
)

func main() {
	os.Exit(root.Main(os.Args[1:]))
}
