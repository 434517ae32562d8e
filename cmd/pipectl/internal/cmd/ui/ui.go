// Package ui is `pipectl ui`: a web UI over the runs of the artifact store
// (see package pipectl.dev/pipectl/cmd/pipectl/internal/ui).
package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/ui"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/argorun"
	"pipectl.dev/pipectl/pipeline/runstore"
)

// DefaultListen is where pipectl ui listens unless told otherwise.
const DefaultListen = "127.0.0.1:8421"

// liveLogLimit bounds the part of a running cluster step's pod log the UI
// reads (from its start); the whole log is there once the step ended.
const liveLogLimit = 4 << 20

// Options are the inputs of `pipectl ui`.
type Options struct {
	IO      *podutil.IOStreams
	Factory *cmdutil.Factory
	// Listen is host:port to serve on.
	Listen string
	// Token is the access token (--token, else $PIPECTL_UI_TOKEN).
	Token string
	// Signals stop the server (default SIGINT and SIGTERM).
	Signals <-chan os.Signal
}

// NewCmdUI returns `pipectl ui`; runF replaces the run function in tests.
func NewCmdUI(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:   "ui [--listen 127.0.0.1:8421]",
		Short: "Browse runs, their DAG, logs, metrics and artifacts in a web browser",
		Long: `Serve a read-only web UI over the runs of the artifact store (--artifacts or
$PIPECTL_ARTIFACTS: local or S3): the runs, newest first; a run's DAG with live
step statuses, each step's log, outputs with previews and downloads; params
and metrics of several runs side by side. Running cluster runs are refreshed
from their workflows as 'pipectl runs' does, and a running step's log is read
from its pod (kubeconfig as kubectl loads it: --kubeconfig, --context).

It listens on the loopback interface. A --listen address other machines can
reach needs an access token: pipectl ui makes one and prints the URL that
carries it, or takes it from --token or $` + wire.EnvUIToken + `. S3 credentials stay
in pipectl: the browser gets bytes, never keys.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Token == "" {
				opts.Token = f.Env(wire.EnvUIToken)
			}
			if runF != nil {
				return runF(opts)
			}
			return uiRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Listen, "listen", DefaultListen, "host:port to serve on; other than loopback, an access token is required")
	cmd.Flags().StringVar(&opts.Token, "token", "", "access token the browser must present (default $"+wire.EnvUIToken+"; generated when --listen is not loopback)")
	cmdutil.AddKubeFlags(cmd, f)
	return cmd
}

func uiRun(ctx context.Context, opts *Options) error {
	loopback, err := ui.Loopback(opts.Listen)
	if err != nil {
		return podutil.FlagErrorf("%v", err)
	}
	token, made := opts.Token, false
	if token != "" && !loopback && len(token) < ui.MinTokenLen {
		return podutil.FlagErrorf("--token (or $%s): a token for --listen %s, which other machines can reach, needs at least %d characters, got %d (leave it out and pipectl makes one)", wire.EnvUIToken, opts.Listen, ui.MinTokenLen, len(token))
	}
	if token == "" && !loopback {
		if token, err = ui.NewToken(); err != nil {
			return err
		}
		made = true
	}
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	warn := &sameOnce{w: opts.IO.ErrOut}
	h, err := ui.New(ui.Options{
		Store:   store,
		Records: runstore.New(opts.Factory.Clients, store, warn),
		LiveLog: func(ctx context.Context, rec *record.Run, step string) ([]byte, bool, error) {
			return argorun.PodLog(ctx, opts.Factory.Clients, rec, step, liveLogLimit)
		},
		Token: token,
		Log:   slog.New(slog.NewTextHandler(warn, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return fmt.Errorf("pipectl ui: %w", err)
	}
	base, stop := context.WithCancel(ctx)
	defer stop()
	srv, ln := ui.NewServer(h, ln, 0, base)
	addr := "http://" + ln.Addr().String() + "/"
	switch {
	case made:
		fmt.Fprintf(opts.IO.ErrOut, "pipectl ui: serving %s at %s?token=%s\n(the token is printed only now; give your own with --token or $%s)\n", store.Root(), addr, token, wire.EnvUIToken)
	case token != "":
		fmt.Fprintf(opts.IO.ErrOut, "pipectl ui: serving %s at %s (open %s?token=TOKEN with your token)\n", store.Root(), addr, addr)
	default:
		fmt.Fprintf(opts.IO.ErrOut, "pipectl ui: serving %s at %s\n", store.Root(), addr)
	}
	sigs, release := podutil.StopSignals(opts.Signals)
	defer release()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-sigs:
	case <-ctx.Done():
	}
	stop() // ends the event streams
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(opts.IO.ErrOut, "pipectl ui: stopped")
	return nil
}

// sameOnce passes on a message unless it is the one it passed last: pages
// and event streams read records again and again, and a note that a cluster
// cannot be reached is worth saying once, not every second.
type sameOnce struct {
	mu   sync.Mutex
	w    io.Writer
	last []byte
}

func (s *sameOnce) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if bytes.Equal(p, s.last) {
		return len(p), nil
	}
	s.last = append(s.last[:0], p...)
	_, err := s.w.Write([]byte(strings.TrimRight(string(p), "\n") + "\n"))
	return len(p), err
}
