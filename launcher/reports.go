package launcher

import (
	"bytes"
	"io"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/gang/progress"
)

// A rank pod's runtime echoes its ranks' metrics to the pod's log as
// progress reports (progress.Report lines, see progress.Echo): the
// launcher takes them out of the log it shows and counts them as the
// ranks' progress, as a local gang counts its ranks' metrics.

// reportFilter passes a pod's log on to next, except the lines that are
// progress reports, which it hands to report (a line report refuses goes
// on to next), and the pod runtime's own lines (wire.RuntimeLinePrefix),
// which go to own when set: shown, but not the rank's progress. It holds
// back at most the start of a line that may be a report or the runtime's:
// a prefix of a marker, or a report of at most progress.MaxReportLine
// bytes.
type reportFilter struct {
	next   io.Writer
	own    io.Writer
	report func(line []byte) bool
	held   []byte
	// inLine is set inside a line that is not a report: it goes on to
	// next (to own when toOwn) as it comes.
	inLine, toOwn bool
}

var (
	marker    = []byte(wire.ProgressMarker)
	ownMarker = []byte(wire.RuntimeLinePrefix)
)

func (f *reportFilter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if f.inLine {
			i := bytes.IndexAny(p, "\r\n")
			if i < 0 {
				return n, f.pass(p)
			}
			if err := f.pass(p[:i+1]); err != nil {
				return n, err
			}
			f.inLine, f.toOwn, p = false, false, p[i+1:]
			continue
		}
		if len(f.held) >= len(marker) && bytes.HasPrefix(f.held, marker) {
			// A report: up to its newline.
			i := bytes.IndexByte(p, '\n')
			if end := i; end < 0 && len(f.held)+len(p) > progress.MaxReportLine || end >= 0 && len(f.held)+end > progress.MaxReportLine {
				// Too long to be a report: a line like any other.
				f.inLine = true
				if err := f.release(); err != nil {
					return n, err
				}
				continue
			}
			if i < 0 {
				f.held = append(f.held, p...)
				return n, nil
			}
			f.held = append(f.held, p[:i]...)
			p = p[i+1:]
			if err := f.end(); err != nil {
				return n, err
			}
			continue
		}
		if f.own != nil && bytes.Equal(f.held, ownMarker) {
			// The runtime's own line: it goes to own as it comes.
			f.inLine, f.toOwn = true, true
			if err := f.release(); err != nil {
				return n, err
			}
			continue
		}
		if k, ok := f.matches(p); ok {
			f.held, p = append(f.held, p[:k]...), p[k:]
			continue
		}
		// Neither: what was held and the rest of the line go on.
		f.inLine = true
		if err := f.release(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// matches says whether the held bytes and the start of p still begin a
// marker, and how many bytes of p that takes (up to the marker's end).
func (f *reportFilter) matches(p []byte) (int, bool) {
	markers := [][]byte{marker}
	if f.own != nil {
		markers = append(markers, ownMarker)
	}
	for _, m := range markers {
		if !bytes.HasPrefix(m, f.held) {
			continue
		}
		k := min(len(m)-len(f.held), len(p))
		if bytes.HasPrefix(m[len(f.held):], p[:k]) {
			return k, true
		}
	}
	return 0, false
}

// end hands the held report line to report, or passes it on.
func (f *reportFilter) end() error {
	line := f.held
	f.held = f.held[:0]
	if f.report(line) {
		return nil
	}
	return f.pass(append(line, '\n'))
}

// release passes the held bytes on.
func (f *reportFilter) release() error {
	held := f.held
	f.held = f.held[:0]
	return f.pass(held)
}

func (f *reportFilter) pass(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	w := f.next
	if f.toOwn {
		w = f.own
	}
	_, err := w.Write(p)
	return err
}

// flush ends the log: a held report without its newline is taken as one.
func (f *reportFilter) flush() {
	if len(f.held) >= len(marker) && bytes.HasPrefix(f.held, marker) {
		_ = f.end()
		return
	}
	if f.own != nil && bytes.Equal(f.held, ownMarker) {
		f.toOwn = true
	}
	_ = f.release()
}

// onReport takes a report line of rp's log: the progress of its rank while
// its attempt is the current one. A line that is no report of one of the
// pod's ranks is refused (shown as printed).
func (s *session) onReport(rp *rankPod, line []byte) bool {
	r, ok, err := progress.ParseReport(line)
	first := s.rankOf(rp.node)
	if !ok || err != nil || r.Rank < first || r.Rank >= first+s.procs {
		return false
	}
	s.mu.Lock()
	watched := s.current == rp.attempt
	s.mu.Unlock()
	if watched {
		s.tr.Report(first, r)
	}
	return true
}
