package launcher

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"pipectl.dev/pipectl/components/process"
)

// outageLogs refuses to open a log its first fails times (as an API server
// that restarts does, then answers Forbidden until its caches are warm),
// then serves it; fails < 0 refuses for ever.
type outageLogs struct {
	mu    sync.Mutex
	fails int
}

func (o *outageLogs) Open(context.Context, string, string, string) (io.ReadCloser, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fails != 0 {
		o.fails--
		return nil, errors.New(`pods "p" is forbidden: User "system:serviceaccount:ml:pipectl-launcher" cannot get resource "pods/log"`)
	}
	return io.NopCloser(strings.NewReader("rank 1 done\n")), nil
}

func streamOnce(t *testing.T, logs LogSource, outage time.Duration) (out, errs string) {
	t.Helper()
	var o, e bytes.Buffer
	var mu sync.Mutex
	s := &session{l: &Launcher{Logs: logs, ErrOut: &e, RetryInterval: time.Millisecond, LogOutage: outage}, ns: "ml", perPod: true}
	rp := &rankPod{node: 1, log: process.NewLineWriter(&mu, "[rank 1] ", nil, &o)}
	s.logs.Add(1)
	s.stream(context.Background(), rp, "p")
	return o.String(), e.String()
}

// TestStreamRidesOutAnOutage: a rank's log that cannot be opened for a
// while (ten refusals, more than the five tries the launcher used to make)
// is streamed once it can; one refused for longer than LogOutage is given
// up, saying why.
func TestStreamRidesOutAnOutage(t *testing.T) {
	out, errs := streamOnce(t, &outageLogs{fails: 10}, time.Minute)
	if out != "[rank 1] rank 1 done\n" || errs != "" {
		t.Errorf("after 10 refusals: log %q, launcher said %q; want the rank's line and nothing said", out, errs)
	}
	out, errs = streamOnce(t, &outageLogs{fails: -1}, 20*time.Millisecond)
	if out != "" || !strings.Contains(errs, "rank 1: cannot stream the log of pod p: pods \"p\" is forbidden") {
		t.Errorf("refused for ever: log %q, launcher said %q; want it given up, naming the error", out, errs)
	}
}
