package argorun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

// ErrLeftRunning is Watch.Run's error when it was interrupted and the
// workflow was left running (Stop said no).
var ErrLeftRunning = errors.New("interrupted")

// StopError is Watch.Run's error when the workflow was asked to stop but
// could not be followed to its end.
type StopError struct{ Err error }

func (e *StopError) Error() string { return e.Err.Error() }
func (e *StopError) Unwrap() error { return e.Err }

// StopTimeout bounds how long Watch waits for a workflow it stopped.
const StopTimeout = time.Minute

// Watch follows a submitted run until its workflow ends and writes the
// run's final record; the follower's part of `pipectl run --on argo`.
type Watch struct {
	Clients *Clients
	Store   artifacts.Store
	// Record is the run's record; Run completes it.
	Record *record.Run
	// Name is the workflow's.
	Name string
	// Logs gets the step pods' logs, Status the progress (a live table
	// when TTY).
	Logs, Status io.Writer
	TTY          bool
	// Poll is the follower's retry delay (tests).
	Poll time.Duration
	// Stop, when a signal interrupts the watch, says whether to stop the
	// workflow (else it is left running: ErrLeftRunning).
	Stop func() bool
	// Warn is told what does not fail the run (a log that could not be kept).
	Warn func(error)
}

// Run follows the workflow until it ends, writes the final record and
// returns nil; sigs interrupt it (see Stop). A workflow deleted while
// followed ends the record Cancelled.
func (w *Watch) Run(sigs <-chan os.Signal) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupted := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			close(interrupted)
			cancel()
		case <-ctx.Done():
		}
	}()
	steps := make([]string, 0, len(w.Record.Steps))
	for _, s := range w.Record.Steps {
		steps = append(steps, s.Name)
	}
	fl := &Follower{Clients: w.Clients, Name: w.Name, Steps: steps, Logs: w.Logs, Status: w.Status, TTY: w.TTY, Poll: w.Poll}
	wf, ferr := fl.Follow(ctx)
	bg := context.Background()
	if ferr != nil {
		select {
		case <-interrupted:
			return w.interrupted(fl, sigs)
		default:
		}
		if errors.Is(ferr, ErrDeleted) {
			if err := Deleted(bg, w.Store, w.Record, wf); err != nil {
				w.Warn(fmt.Errorf("run record: %w", err))
			}
		}
		return ferr
	}
	return Complete(bg, w.Store, w.Record, wf, fl, w.Warn)
}

// interrupted stops the workflow when Stop says so and follows it to its
// end (a second signal gives up), else leaves it running.
func (w *Watch) interrupted(followed *Follower, sigs <-chan os.Signal) error {
	if w.Stop == nil || !w.Stop() {
		return ErrLeftRunning
	}
	ctx, cancel := context.WithTimeout(context.Background(), StopTimeout)
	defer cancel()
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := Stop(ctx, w.Clients, w.Name); err != nil {
		return fmt.Errorf("stop workflow %s: %w", w.Name, err)
	}
	fmt.Fprintf(w.Status, "\nStopping workflow %s…\n", w.Name)
	fl := &Follower{Clients: w.Clients, Name: w.Name, Logs: w.Status, Status: w.Status, Poll: w.Poll}
	wf, err := fl.Follow(ctx)
	if err != nil {
		return &StopError{Err: fmt.Errorf("workflow %s asked to stop: %w", w.Name, err)}
	}
	// The logs streamed until the signal: the launcher step's (its ranks')
	// is kept nowhere else.
	return Complete(context.Background(), w.Store, w.Record, wf, followed, w.Warn)
}
