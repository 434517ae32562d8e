package artifacts

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"
)

// DefaultS3ReconnectWait is how long an S3 store whose server answered once
// waits for it to accept connections again (a restarting server refuses
// them): S3Options.ReconnectWait when zero.
const DefaultS3ReconnectWait = 60 * time.Second

// reconnectDialer dials like dial, but once a connection succeeded it
// retries refused connections, with backoff, until wait has passed since
// the server first refused: a server restarting mid-transfer is waited for
// instead of failing the transfer after minio-go's own retries (about 4 s).
// Before any connection succeeded a refusal returns at once: an endpoint
// that never answered is a mistake to report, not a restart to wait out.
// The wait is shared by concurrent dials and by the requests minio-go
// retries after it: once the server refused for longer than wait, every
// dial fails at once until one succeeds.
type reconnectDialer struct {
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	wait  time.Duration
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error

	mu        sync.Mutex
	reached   bool      // a connection succeeded
	downSince time.Time // first refusal since the last success; zero when up
}

func newReconnectDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error), wait time.Duration) *reconnectDialer {
	return &reconnectDialer{dial: dial, wait: wait, now: time.Now, sleep: sleepCtx}
}

// Reconnect backoff: the first retry after reconnectFirst, doubling up to reconnectMax.
const (
	reconnectFirst = 100 * time.Millisecond
	reconnectMax   = 2 * time.Second
)

// DialContext is an http.Transport's DialContext.
func (d *reconnectDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	backoff := reconnectFirst
	for {
		conn, err := d.dial(ctx, network, addr)
		if err == nil {
			d.mu.Lock()
			d.reached, d.downSince = true, time.Time{}
			d.mu.Unlock()
			return conn, nil
		}
		if !errors.Is(err, syscall.ECONNREFUSED) || d.wait <= 0 {
			return nil, err
		}
		d.mu.Lock()
		reached := d.reached
		now := d.now()
		if reached && d.downSince.IsZero() {
			d.downSince = now
		}
		left := d.wait - now.Sub(d.downSince)
		d.mu.Unlock()
		if !reached {
			return nil, err
		}
		if left <= 0 {
			return nil, fmt.Errorf("%w (refused for %s)", err, d.wait)
		}
		if err := d.sleep(ctx, min(backoff, left)); err != nil {
			return nil, err
		}
		backoff = min(2*backoff, reconnectMax)
	}
}

// sleepCtx sleeps for d or until ctx ends (then its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
