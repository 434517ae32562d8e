package ui

import (
	"context"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/components/componentstest"
)

// serve runs uiRun until the test ends and returns the line it printed.
func serve(t *testing.T, listen, token string) string {
	t.Helper()
	errOut := &componentstest.Buffer{}
	f := &cmdutil.Factory{IOStreams: &podutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: errOut},
		ArtifactsRoot: t.TempDir(), Getenv: func(string) string { return "" }}
	sigs := make(chan os.Signal, 1)
	done := make(chan error, 1)
	go func() {
		done <- uiRun(context.Background(), &Options{IO: f.IOStreams, Factory: f, Listen: listen, Token: token, Signals: sigs})
	}()
	t.Cleanup(func() {
		sigs <- syscall.SIGTERM
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("uiRun: %v", err)
			}
			if !strings.Contains(errOut.String(), "pipectl ui: stopped") {
				t.Errorf("no goodbye:\n%s", errOut)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("pipectl ui did not stop on SIGTERM")
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errOut.String(), "\n") {
		select {
		case err := <-done:
			t.Fatalf("uiRun ended: %v\n%s", err, errOut)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("pipectl ui said nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return errOut.String()
}

func status(t *testing.T, url string, header ...string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(header) == 2 {
		req.Header.Set(header[0], header[1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// banner matches the line pipectl ui prints: the URL, its host:port, the token.
func banner(out string) []string {
	return regexp.MustCompile(`serving \S+ at (http://(\S+?))/(\?token=(\w+))?`).FindStringSubmatch(out)
}

func TestLoopbackNeedsNoToken(t *testing.T) {
	m := banner(serve(t, "127.0.0.1:0", ""))
	if m == nil || m[3] != "" {
		t.Fatalf("unexpected banner match %q", m)
	}
	if got := status(t, m[1]+"/api/runs"); got != http.StatusOK {
		t.Errorf("GET /api/runs: %d", got)
	}
}

// Listening on every interface makes a token and prints it once.
func TestNonLoopbackMakesAToken(t *testing.T) {
	out := serve(t, "0.0.0.0:0", "")
	m := banner(out)
	if m == nil || len(m[4]) != 32 {
		t.Fatalf("banner %q: want a URL with a generated token", out)
	}
	base := "http://127.0.0.1:" + m[2][strings.LastIndex(m[2], ":")+1:]
	if got := status(t, base+"/api/runs"); got != http.StatusUnauthorized {
		t.Errorf("without the token: %d", got)
	}
	if got := status(t, base+"/api/runs", "Authorization", "Bearer "+m[4]); got != http.StatusOK {
		t.Errorf("with the token: %d", got)
	}
}

// A token given is required and never printed.
func TestGivenToken(t *testing.T) {
	out := serve(t, "127.0.0.1:0", "my-own-token")
	if strings.Contains(out, "my-own-token") {
		t.Errorf("the token was printed: %s", out)
	}
	m := banner(out)
	if got := status(t, m[1]+"/api/runs"); got != http.StatusUnauthorized {
		t.Errorf("without the token: %d", got)
	}
}

func TestBadListen(t *testing.T) {
	f := &cmdutil.Factory{IOStreams: &podutil.IOStreams{Out: io.Discard, ErrOut: io.Discard}, ArtifactsRoot: t.TempDir()}
	err := uiRun(context.Background(), &Options{IO: f.IOStreams, Factory: f, Listen: "8421"})
	if err == nil || !strings.Contains(err.Error(), `--listen "8421": expected host:port`) {
		t.Errorf("uiRun with --listen 8421: %v", err)
	}
}

// A token for an address other machines can reach must not be guessable:
// a one-character --token is refused before anything listens.
func TestShortTokenRefused(t *testing.T) {
	f := &cmdutil.Factory{IOStreams: &podutil.IOStreams{Out: io.Discard, ErrOut: io.Discard}, ArtifactsRoot: t.TempDir()}
	err := uiRun(context.Background(), &Options{IO: f.IOStreams, Factory: f, Listen: "0.0.0.0:0", Token: "x"})
	if err == nil || !strings.Contains(err.Error(), "needs at least 16 characters, got 1") {
		t.Errorf("uiRun with --token x on 0.0.0.0: %v", err)
	}
}
