package cmdutil

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams are a command's standard streams. Data goes to Out; progress
// and status to ErrOut.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// ErrTTY says whether ErrOut is a terminal (progress bars, colour).
	ErrTTY bool
	// InTTY says whether In is a terminal (questions may be asked).
	InTTY bool
}

// System returns the process's streams.
func System() *IOStreams {
	return &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, ErrTTY: term.IsTerminal(int(os.Stderr.Fd())), InTTY: term.IsTerminal(int(os.Stdin.Fd()))}
}

// Test returns streams backed by buffers, and the buffers.
func Test() (ios *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}
