package progress

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
)

// Files follows the metrics files of a gang attempt, one per rank, from
// their start: each Poll reads what was appended since the last.
type Files struct {
	files []*metricsFile
	buf   []byte
}

type metricsFile struct {
	rank int
	path string
	off  int64
	line []byte // the start of a line whose end is not written yet
	long bool   // the current line is longer than MaxLine: skip to its end
}

// NewFiles returns a follower of the metrics file of each rank (paths by
// rank: paths[r] is rank r's file, "" for none).
func NewFiles(paths map[int]string) *Files {
	f := &Files{}
	for r, p := range paths {
		if p != "" {
			f.files = append(f.files, &metricsFile{rank: r, path: p})
		}
	}
	return f
}

// Poll reads the new lines of every file into t. A file not yet created is
// no error; the first other error is returned after every file was read.
func (f *Files) Poll(t *Tracker) error {
	if f.buf == nil {
		f.buf = make([]byte, 64<<10)
	}
	var first error
	for _, mf := range f.files {
		if err := mf.poll(t, f.buf); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (mf *metricsFile) poll(t *Tracker, buf []byte) error {
	fh, err := os.Open(mf.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer fh.Close()
	if st, err := fh.Stat(); err == nil && st.Size() < mf.off {
		// Truncated and written again: start over.
		mf.off, mf.line, mf.long = 0, mf.line[:0], false
	}
	for {
		n, err := fh.ReadAt(buf, mf.off)
		mf.off += int64(n)
		mf.lines(t, buf[:n])
		if err == io.EOF || n == 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// lines passes each complete line of p (after the partial line read
// before) to t; a line longer than MaxLine is counted as malformed.
func (mf *metricsFile) lines(t *Tracker, p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			mf.add(p)
			return
		}
		mf.add(p[:i])
		switch {
		case mf.long:
			t.Metric(mf.rank, nil) // malformed: too long
		case len(bytes.TrimSpace(mf.line)) > 0:
			t.Metric(mf.rank, mf.line)
		}
		mf.line, mf.long = mf.line[:0], false
		p = p[i+1:]
	}
}

func (mf *metricsFile) add(p []byte) {
	if mf.long {
		return
	}
	if len(mf.line)+len(p) > MaxLine {
		mf.line, mf.long = mf.line[:0], true
		return
	}
	mf.line = append(mf.line, p...)
}
