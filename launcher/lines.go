package launcher

import (
	"bytes"
	"io"
	"sync"
)

// linePrefixer writes whole lines, each with a prefix, to out; writers that
// share a mutex never interleave within a line. It keeps the last lines
// written (without the prefix) when tail > 0.
type linePrefixer struct {
	mu     *sync.Mutex
	out    io.Writer
	prefix string
	buf    []byte
	tail   int
	last   []string
}

func newLinePrefixer(mu *sync.Mutex, out io.Writer, prefix string, tail int) *linePrefixer {
	return &linePrefixer{mu: mu, out: out, prefix: prefix, tail: tail}
}

func (w *linePrefixer) Write(p []byte) (int, error) {
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
func (w *linePrefixer) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(w.buf)
		w.buf = nil
	}
}

// Last returns the last lines written, oldest first.
func (w *linePrefixer) Last() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.last...)
}

func (w *linePrefixer) emit(line []byte) {
	line = bytes.TrimSuffix(line, []byte("\r"))
	out := make([]byte, 0, len(w.prefix)+len(line)+1)
	out = append(append(append(out, w.prefix...), line...), '\n')
	if w.out != nil {
		_, _ = w.out.Write(out)
	}
	if w.tail > 0 {
		if len(w.last) == w.tail {
			w.last = append(w.last[:0], w.last[1:]...)
		}
		w.last = append(w.last, string(line))
	}
}
