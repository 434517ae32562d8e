package artifacts

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestReconnectDialer drives the dialer with scripted dial results on a fake
// clock: which dials it makes, how long it waits, what it returns.
func TestReconnectDialer(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	other := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.EHOSTUNREACH}
	tests := []struct {
		name    string
		reached bool // a dial succeeded before
		wait    time.Duration
		results []error // of the successive dials; nil is a connection
		// want
		dials   int
		slept   []time.Duration
		wantErr error // nil: a connection
	}{{
		name:    "never reached: a refusal returns at once",
		wait:    time.Minute,
		results: []error{refused},
		dials:   1,
		wantErr: syscall.ECONNREFUSED,
	}, {
		name:    "reached: refusals are retried with backoff until the server is back",
		reached: true,
		wait:    time.Minute,
		results: []error{refused, refused, refused, refused, refused, refused, nil},
		dials:   7,
		slept:   []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 2 * time.Second},
	}, {
		name:    "reached: refusals for longer than the wait fail",
		reached: true,
		wait:    time.Second,
		results: []error{refused, refused, refused, refused, refused, refused},
		dials:   5,
		slept:   []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 300 * time.Millisecond},
		wantErr: syscall.ECONNREFUSED,
	}, {
		name:    "other errors are not retried",
		reached: true,
		wait:    time.Minute,
		results: []error{other},
		dials:   1,
		wantErr: syscall.EHOSTUNREACH,
	}, {
		name:    "a negative wait never retries",
		reached: true,
		wait:    -1,
		results: []error{refused, nil},
		dials:   1,
		wantErr: syscall.ECONNREFUSED,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := time.Unix(1000, 0)
			var slept []time.Duration
			dials := 0
			d := newReconnectDialer(func(context.Context, string, string) (net.Conn, error) {
				err := tt.results[dials]
				dials++
				if err != nil {
					return nil, err
				}
				c, _ := net.Pipe()
				return c, nil
			}, tt.wait)
			d.now = func() time.Time { return clock }
			d.sleep = func(_ context.Context, dur time.Duration) error {
				slept = append(slept, dur)
				clock = clock.Add(dur)
				return nil
			}
			d.reached = tt.reached
			conn, err := d.DialContext(t.Context(), "tcp", "127.0.0.1:9")
			if conn != nil {
				conn.Close()
			}
			if (tt.wantErr == nil) != (err == nil) || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
				t.Errorf("DialContext error %v, want %v", err, tt.wantErr)
			}
			if dials != tt.dials {
				t.Errorf("%d dials, want %d", dials, tt.dials)
			}
			if diff := cmp.Diff(tt.slept, slept); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

// A dial after the wait ran out fails at once (minio-go retries the request:
// it must not wait again), and a success starts the count afresh.
func TestReconnectDialerSharedWait(t *testing.T) {
	clock := time.Unix(1000, 0)
	up := false
	d := newReconnectDialer(func(context.Context, string, string) (net.Conn, error) {
		if up {
			c, _ := net.Pipe()
			return c, nil
		}
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}, 5*time.Second)
	d.now = func() time.Time { return clock }
	d.sleep = func(_ context.Context, dur time.Duration) error { clock = clock.Add(dur); return nil }
	d.reached = true
	began := clock
	if _, err := d.DialContext(t.Context(), "tcp", "x"); err == nil || clock.Sub(began) != 5*time.Second {
		t.Fatalf("first dial: %v after %s, want refused after 5s", err, clock.Sub(began))
	}
	began = clock
	if _, err := d.DialContext(t.Context(), "tcp", "x"); err == nil || clock != began {
		t.Fatalf("second dial: %v after %s, want refused at once", err, clock.Sub(began))
	}
	up = true
	c, err := d.DialContext(t.Context(), "tcp", "x")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	up = false
	began = clock
	if _, err := d.DialContext(t.Context(), "tcp", "x"); err == nil || clock.Sub(began) != 5*time.Second {
		t.Fatalf("after a success: %v after %s, want a fresh 5s wait", err, clock.Sub(began))
	}
}

// The dialer stops waiting when the context ends.
func TestReconnectDialerContext(t *testing.T) {
	d := newReconnectDialer(func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}, time.Hour)
	d.reached = true
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if _, err := d.DialContext(ctx, "tcp", "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("DialContext = %v, want the context's deadline", err)
	}
}
