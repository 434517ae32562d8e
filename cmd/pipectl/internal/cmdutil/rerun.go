package cmdutil

import (
	"fmt"
	"strings"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/components/record"
)

// printable is s from a record, for a terminal: control characters (an
// escape sequence rewriting the screen) shown as "?".
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return '?'
		}
		return r
	}, s)
}

// TrustRerun is the user's word before a rerun runs code from the store:
// the pipeline pack of run (already checked against the digest its record
// names) was written by whoever could write the store, as was the record.
// With yes it runs; on a terminal the origin is shown and the user asked;
// elsewhere it is refused, saying --yes runs it.
func TrustRerun(ios *podutil.IOStreams, run *record.Run, yes bool) error {
	if yes || run == nil {
		return nil
	}
	what := DescribeOrigin(run)
	if ios.InTTY && ios.ErrTTY {
		fmt.Fprint(ios.ErrOut, what)
		if ios.Confirm("Run this code?") {
			return nil
		}
		return &podutil.ExitError{Code: podutil.ExitError1, Err: fmt.Errorf("--rerun %s: not confirmed; nothing ran", run.ID)}
	}
	return podutil.FlagErrorf("--rerun %s runs code read from the store, which whoever can write the store could have changed:\n%s"+
		"no terminal to ask on: pass --yes to run it", run.ID, what)
}

// DescribeOrigin says where the code a rerun of run runs comes from.
func DescribeOrigin(run *record.Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Rerun of run %s (pipeline %s, started %s):\n", printable(run.ID), printable(run.Pipeline), run.Started.UTC().Format("2006-01-02 15:04:05Z"))
	if o := run.Origin; o != nil {
		if p := o.Pipeline; p != nil {
			fmt.Fprintf(&b, "  code:    pack %s, file %s (its sha256 checked)\n", printable(p.Pack), printable(p.File))
		}
		if g := o.Git; g != nil {
			dirty := ""
			if g.Dirty {
				dirty = ", with uncommitted changes"
			}
			fmt.Fprintf(&b, "  git:     commit %s", printable(g.Commit))
			if g.Branch != "" {
				fmt.Fprintf(&b, " on branch %s", printable(g.Branch))
			}
			if g.Remote != "" {
				fmt.Fprintf(&b, " of %s", printable(g.Remote))
			}
			fmt.Fprintf(&b, "%s\n", dirty)
		}
		if o.Pipectl != "" {
			fmt.Fprintf(&b, "  pipectl: %s\n", printable(o.Pipectl))
		}
	}
	if run.Runner != nil && run.Runner.Host != "" {
		fmt.Fprintf(&b, "  host:    %s\n", printable(run.Runner.Host))
	}
	return b.String()
}
