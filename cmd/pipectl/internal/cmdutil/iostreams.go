package cmdutil

import (
	"bytes"

	"pipectl.dev/pipectl/cmd/internal/podutil"
)

// IOStreams are a command's standard streams (podutil.IOStreams).
type IOStreams = podutil.IOStreams

// System returns the process's streams.
func System() *IOStreams { return podutil.System() }

// Test returns streams backed by buffers, and the buffers.
func Test() (ios *IOStreams, in, out, errOut *bytes.Buffer) { return podutil.Test() }
