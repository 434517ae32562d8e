// Package buildinfo holds what the build stamps into pipectl: its version,
// set by the linker (make build, make image, the Dockerfile). The root
// command gives it to every command through the Factory; the image builder
// names the variable to set.
package buildinfo

// Version is pipectl's version: "dev" unless the build sets it with
// -ldflags "-X " + VersionVar + "=v1.2.3".
var Version = "dev"

// VersionVar is the linker's name of Version (PACKAGE.NAME).
const VersionVar = "pipectl.dev/pipectl/cmd/internal/buildinfo.Version"
