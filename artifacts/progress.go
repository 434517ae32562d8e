package artifacts

import (
	"context"
	"io"
)

// ProgressMinSize is the smallest transfer a terminal progress bar is shown for.
const ProgressMinSize = 4 << 20

// Progress is told about the transfers of Publish and Fetch so it can show
// them. Publish and Fetch find it in their context (see WithProgress); a
// context without one shows nothing.
type Progress interface {
	// Start begins a transfer of total bytes (-1 when unknown) described by
	// desc, e.g. "upload s3://bucket/run/step/model". The returned Tracker
	// may be used from several goroutines at once; nil follows nothing.
	Start(desc string, total int64) Tracker
}

// Tracker follows one transfer.
type Tracker interface {
	// Add reports n more bytes moved.
	Add(n int64)
	// Done ends the transfer; err is nil on success.
	Done(err error)
}

type progressKey struct{}

// WithProgress returns a context whose transfers report to p. A nil p
// reports nothing.
func WithProgress(ctx context.Context, p Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// ProgressFrom returns the Progress of ctx, or nil.
func ProgressFrom(ctx context.Context) Progress {
	p, _ := ctx.Value(progressKey{}).(Progress)
	return p
}

// startProgress starts a tracker from ctx's Progress; never nil.
func startProgress(ctx context.Context, desc string, total int64) Tracker {
	if p := ProgressFrom(ctx); p != nil {
		if t := p.Start(desc, total); t != nil {
			return t
		}
	}
	return nopTracker{}
}

type nopTracker struct{}

func (nopTracker) Add(int64)  {}
func (nopTracker) Done(error) {}

// countingReader reports the bytes read through it to a Tracker.
type countingReader struct {
	r io.Reader
	t Tracker
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.t.Add(int64(n))
	return n, err
}

// countingWriter reports the bytes written through it to a Tracker.
type countingWriter struct {
	w io.Writer
	t Tracker
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.t.Add(int64(n))
	return n, err
}
