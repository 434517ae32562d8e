// Package progress draws the progress bars of large transfers on a
// terminal: the CLI's artifacts.Progress (the store reports transfers to
// whatever Progress its context carries; this package shows them).
package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"pipectl.dev/pipectl/artifacts"
)

// Terminal returns an artifacts.Progress that draws a progress bar on w
// for transfers of artifacts.ProgressMinSize bytes or more, when w is a
// terminal; else it returns nil, which shows nothing. The CLI passes
// os.Stderr:
//
//	ctx = artifacts.WithProgress(ctx, progress.Terminal(os.Stderr))
func Terminal(w io.Writer) artifacts.Progress {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return NewBars(w, artifacts.ProgressMinSize)
}

// NewBars returns an artifacts.Progress that draws progress bars on w,
// whatever w is, for transfers of at least min bytes.
func NewBars(w io.Writer, min int64) artifacts.Progress {
	return &barProgress{w: w, min: min}
}

type barProgress struct {
	w   io.Writer
	min int64
}

func (p *barProgress) Start(desc string, total int64) artifacts.Tracker {
	if total >= 0 && total < p.min {
		return nil // too small to show
	}
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowTotalBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(20),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionUseIECUnits(true),
	)
	return &barTracker{p: p, bar: bar}
}

type barTracker struct {
	p    *barProgress
	bar  *progressbar.ProgressBar
	once sync.Once
}

func (t *barTracker) Add(n int64) { _ = t.bar.Add64(n) }

func (t *barTracker) Done(err error) {
	t.once.Do(func() {
		if err == nil {
			_ = t.bar.Finish()
		} else {
			_ = t.bar.Exit()
		}
		if err != nil {
			fmt.Fprintln(t.p.w, " failed")
		} else {
			fmt.Fprintln(t.p.w)
		}
	})
}
