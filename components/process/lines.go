package process

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// MaxLine caps the bytes a LineWriter keeps of one line: the rest of a
// longer line is dropped and counted in a marker, so a program that never
// prints a newline cannot make its runner hold its whole output.
const MaxLine = 64 << 10

// ProgressInterval is how often a LineWriter logs the state of a progress
// line (text rewritten in place after each '\r', as tqdm and curl print).
const ProgressInterval = 5 * time.Second

// LineWriter writes whole lines, each with a prefix, to every sink: the
// output of one rank or step, labelled, into a log that several of them
// share. LineWriters that share a mutex never interleave within a line.
//
// A line ends at '\n'. A '\r' that is not part of "\r\n" ends a progress
// state: the text after it replaces the text before it, as on a terminal.
// Progress states are not logged one by one: the last one is logged when
// its line ends, and at most every ProgressInterval while it goes on.
// A line or progress state longer than MaxLine is cut there, and the
// number of bytes dropped is added to it.
type LineWriter struct {
	mu     *sync.Mutex
	prefix string
	sinks  []io.Writer
	tail   *Tail
	now    func() time.Time

	buf      []byte // the current line or progress state, at most MaxLine bytes
	dropped  int64  // bytes of the current line or state beyond MaxLine
	progress []byte // the last complete progress state of the current line
	cr       bool   // the last byte written was a '\r'
	// progressAt is when the line's progress was last logged (or began);
	// progressShown says the current state has been logged.
	progressAt    time.Time
	progressShown bool
}

// NewLineWriter returns a LineWriter that locks mu, puts prefix before each
// line and writes it to sinks; tail, when not nil, keeps the last lines.
func NewLineWriter(mu *sync.Mutex, prefix string, tail *Tail, sinks ...io.Writer) *LineWriter {
	return &LineWriter{mu: mu, prefix: prefix, sinks: sinks, tail: tail, now: time.Now}
}

// Write implements io.Writer; a partial line waits for its end (or Flush).
func (w *LineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			i = len(p)
		}
		if i > 0 {
			w.cr = false
			keep := min(i, MaxLine-len(w.buf))
			w.buf = append(w.buf, p[:keep]...)
			w.dropped += int64(i - keep)
			p = p[i:]
			continue
		}
		cr := w.cr
		w.cr = p[0] == '\r'
		if w.cr {
			w.endProgress()
		} else {
			if cr && len(w.buf) == 0 && w.dropped == 0 {
				// "\r\n", or a newline right after a progress state: the
				// line is the state the terminal shows, unless it was
				// logged already.
				if w.progressShown {
					w.progress = w.progress[:0]
				}
				w.buf, w.progress = w.progress, w.buf[:0]
			}
			if len(w.buf) > 0 || w.dropped > 0 || !cr || !w.progressShown {
				w.emit(w.buf, w.dropped)
			}
			w.buf, w.dropped, w.progress = w.buf[:0], 0, w.progress[:0]
			w.progressAt, w.progressShown = time.Time{}, false
		}
		p = p[1:]
	}
	if len(w.progress) > 0 && !w.progressShown && w.now().Sub(w.progressAt) >= ProgressInterval {
		w.emit(w.progress, 0)
		w.progressAt, w.progressShown = w.now(), true
	}
	return n, nil
}

// endProgress keeps the current text as the line's last progress state.
func (w *LineWriter) endProgress() {
	if len(w.buf) == 0 && w.dropped == 0 {
		return
	}
	w.progress = append(w.progress[:0], w.buf...)
	if w.dropped > 0 {
		w.progress = append(w.progress, dropMarker(w.dropped)...)
	}
	w.buf, w.dropped = w.buf[:0], 0
	w.progressShown = false
	if w.progressAt.IsZero() {
		w.progressAt = w.now()
	}
}

// Flush writes a final partial line (or its last progress state).
func (w *LineWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case len(w.buf) > 0 || w.dropped > 0:
		w.emit(w.buf, w.dropped)
	case len(w.progress) > 0 && !w.progressShown:
		w.emit(w.progress, 0)
	}
	w.buf, w.dropped, w.progress, w.cr = nil, 0, nil, false
	w.progressAt, w.progressShown = time.Time{}, false
}

// Last returns the last lines this writer's tail kept, oldest first, with
// this writer's prefix removed.
func (w *LineWriter) Last() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tail == nil {
		return nil
	}
	out := make([]string, 0, len(w.tail.lines))
	for _, l := range w.tail.lines {
		out = append(out, strings.TrimPrefix(l, w.prefix))
	}
	return out
}

func (w *LineWriter) emit(line []byte, dropped int64) {
	out := make([]byte, 0, len(w.prefix)+len(line)+40)
	out = append(append(out, w.prefix...), line...)
	if dropped > 0 {
		out = append(out, dropMarker(dropped)...)
	}
	for _, s := range w.sinks {
		if s != nil {
			_, _ = s.Write(append(out, '\n'))
		}
	}
	if w.tail != nil {
		w.tail.add(string(out))
	}
}

func dropMarker(n int64) string {
	return fmt.Sprintf(" [pipectl: %d more bytes of this line dropped]", n)
}

// TailLineMax caps the bytes a Tail keeps of each line: a failure summary
// quotes the last lines, not whole pages of them.
const TailLineMax = 1 << 10

// Tail keeps the last N lines written through the LineWriters that share
// it, with their prefixes, each cut to TailLineMax bytes. Read it with
// Lines under the writers' mutex, or once they are done.
type Tail struct {
	n     int
	lines []string
}

// NewTail keeps the last n lines.
func NewTail(n int) *Tail { return &Tail{n: n} }

func (t *Tail) add(line string) {
	if t.n <= 0 {
		return
	}
	if len(line) > TailLineMax {
		cut := TailLineMax
		for cut > 0 && !utf8Start(line[cut]) {
			cut--
		}
		line = line[:cut] + fmt.Sprintf(" [… %d more bytes]", len(line)-cut)
	}
	if len(t.lines) == t.n {
		t.lines = append(t.lines[:0], t.lines[1:]...)
	}
	t.lines = append(t.lines, line)
}

// utf8Start reports whether b can begin a UTF-8 sequence (so that cutting a
// string before it does not split a character).
func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// Lines returns the kept lines, oldest first.
func (t *Tail) Lines() []string { return append([]string(nil), t.lines...) }
