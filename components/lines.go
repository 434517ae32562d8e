package components

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// LineWriter writes whole lines, each with a prefix, to every sink: the
// output of one rank or step, labelled, into a log that several of them
// share. LineWriters that share a mutex never interleave within a line.
type LineWriter struct {
	mu     *sync.Mutex
	prefix string
	sinks  []io.Writer
	tail   *Tail
	buf    []byte
}

// NewLineWriter returns a LineWriter that locks mu, puts prefix before each
// line and writes it to sinks; tail, when not nil, keeps the last lines.
func NewLineWriter(mu *sync.Mutex, prefix string, tail *Tail, sinks ...io.Writer) *LineWriter {
	return &LineWriter{mu: mu, prefix: prefix, sinks: sinks, tail: tail}
}

// Write implements io.Writer; a partial line waits for its end (or Flush).
func (w *LineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.emit(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

// Flush writes a final partial line.
func (w *LineWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(w.buf)
		w.buf = nil
	}
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

func (w *LineWriter) emit(line []byte) {
	line = bytes.TrimSuffix(line, []byte("\r"))
	out := make([]byte, 0, len(w.prefix)+len(line)+1)
	out = append(append(append(out, w.prefix...), line...), '\n')
	for _, s := range w.sinks {
		if s != nil {
			_, _ = s.Write(out)
		}
	}
	if w.tail != nil {
		w.tail.add(w.prefix + string(line))
	}
}

// Tail keeps the last N lines written through the LineWriters that share
// it, with their prefixes. Read it with Lines under the writers' mutex, or
// once they are done.
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
	if len(t.lines) == t.n {
		t.lines = append(t.lines[:0], t.lines[1:]...)
	}
	t.lines = append(t.lines, line)
}

// Lines returns the kept lines, oldest first.
func (t *Tail) Lines() []string { return append([]string(nil), t.lines...) }
