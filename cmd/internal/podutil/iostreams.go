package podutil

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

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

// Confirm asks question on ErrOut and says whether the answer on In is
// yes; without a terminal on both it asks nothing and says no.
func (s *IOStreams) Confirm(question string) bool {
	if !s.InTTY || !s.ErrTTY {
		return false
	}
	fmt.Fprintf(s.ErrOut, "%s [y/N] ", question)
	answer, _ := bufio.NewReader(s.In).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(answer))
	return a == "y" || a == "yes"
}

// LogsOut is where a run's logs go with output format (-o): Out, unless a
// structured format (json, yaml) owns it; then ErrOut, with the status.
func (s *IOStreams) LogsOut(format string) io.Writer {
	if format != "" && format != FormatTable {
		return s.ErrOut
	}
	return s.Out
}
