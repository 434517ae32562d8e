// Command version stands in for pipectl in imagebuild's test (a quick
// cross-build): "version" prints the version it was linked with.
package main

import (
	"fmt"
	"os"
)

var version = "dev"

func main() {
	if len(os.Args) == 2 && os.Args[1] == "version" {
		fmt.Println("pipectl", version)
		return
	}
	os.Exit(2)
}
