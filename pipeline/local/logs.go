package local

import (
	"bytes"
	"io"
	"sync"
)

// lineWriter writes whole lines, each with a prefix, to every sink. Writes
// to a shared sink from several lineWriters never interleave within a line.
type lineWriter struct {
	mu     *sync.Mutex // guards the sinks, shared between writers
	prefix string
	sinks  []io.Writer
	buf    []byte
	tail   *tail
}

func (w *lineWriter) Write(p []byte) (int, error) {
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
func (w *lineWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(w.buf)
		w.buf = nil
	}
}

func (w *lineWriter) emit(line []byte) {
	line = bytes.TrimSuffix(line, []byte("\r"))
	out := make([]byte, 0, len(w.prefix)+len(line)+1)
	out = append(append(append(out, w.prefix...), line...), '\n')
	for _, s := range w.sinks {
		_, _ = s.Write(out)
	}
	if w.tail != nil {
		w.tail.add(string(out))
	}
}

// tail keeps the last n lines written.
type tail struct {
	n     int
	lines []string
}

func (t *tail) add(line string) {
	t.lines = append(t.lines, line)
	if len(t.lines) > t.n {
		t.lines = t.lines[len(t.lines)-t.n:]
	}
}
