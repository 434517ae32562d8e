// Command print prints buildinfo.Version (TestVersionVar builds it with the
// version set by the linker).
package main

import "pipectl.dev/pipectl/cmd/internal/buildinfo"

func main() { print(buildinfo.Version) }
