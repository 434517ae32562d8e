package podutil

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// StopSignals returns given when a test supplies it, else a channel that
// receives SIGINT and SIGTERM, and the function that stops that delivery.
func StopSignals(given <-chan os.Signal) (<-chan os.Signal, func()) {
	if given != nil {
		return given, func() {}
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	return ch, func() { signal.Stop(ch) }
}

// Stopper is a context that SIGINT or SIGTERM (or a test's signals)
// cancels, with "stopped by SIGNAL" as the cause.
type Stopper struct {
	mu  sync.Mutex
	got os.Signal
}

// StopOnSignal returns ctx, cancelled when a stop signal arrives (notify,
// when set, is called with it first), and release, which stops listening
// and cancels ctx (calling it again does nothing); Signal then says which
// signal stopped ctx, if any.
func (s *Stopper) StopOnSignal(parent context.Context, given <-chan os.Signal, notify func(os.Signal)) (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs, stopSignals := StopSignals(given)
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case sig := <-sigs:
			s.mu.Lock()
			s.got = sig
			s.mu.Unlock()
			if notify != nil {
				notify(sig)
			}
			cancel(fmt.Errorf("stopped by %v", sig))
		case <-done:
		}
	}()
	return ctx, sync.OnceFunc(func() {
		close(done)
		<-exited
		stopSignals()
		cancel(nil)
	})
}

// Signal is the signal that stopped the context, or nil.
func (s *Stopper) Signal() os.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got
}

// SignalExitCode is the exit code of a command stopped by sig: 128+sig, as
// a shell reports it.
func SignalExitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return ExitCancelled
}
