package ui

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

// Records reads run records. The UI reads every record through it, so that
// cluster runs are refreshed from their workflows the way the CLI does.
type Records interface {
	// List returns every run, newest first.
	List(ctx context.Context) ([]*record.Run, error)
	// Get returns the run id ("latest": the newest run). A run that does not
	// exist gives an error for which errors.Is(err, artifacts.ErrNotFound) holds.
	Get(ctx context.Context, id string) (*record.Run, error)
}

// Options configure the UI's handler.
type Options struct {
	// Store holds the runs' outputs and logs.
	Store artifacts.Store
	// Records reads the run records.
	Records Records
	// LiveLog, when set, reads the log of a step of a running run before the
	// store has it (a cluster run's step pod): its bytes so far, or ok
	// false when there is none yet.
	LiveLog func(ctx context.Context, rec *record.Run, step string) (log []byte, ok bool, err error)
	// Token, when set, is required on every request (see doc.go).
	Token string
	// Poll is how often live views look at the store (default 1s).
	Poll time.Duration
	// StreamsPerClient and Streams cap the open event streams of one
	// client and of all (default MaxStreamsPerClient and MaxStreams).
	StreamsPerClient, Streams int
	// Log receives request errors (default: discarded).
	Log *slog.Logger
}

//go:embed assets
var assets embed.FS

type server struct {
	Options
	pages   *template.Template
	mux     *http.ServeMux
	streams *streams
}

// New returns the UI's handler: pages, the JSON API and downloads, behind
// the token check and the read-only and security headers.
func New(opts Options) (http.Handler, error) {
	if opts.Store == nil || opts.Records == nil {
		return nil, errors.New("ui: a store and a records reader are required")
	}
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.StreamsPerClient <= 0 {
		opts.StreamsPerClient = MaxStreamsPerClient
	}
	if opts.Streams <= 0 {
		opts.Streams = MaxStreams
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	pages, err := template.New("").Funcs(templateFuncs()).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, fmt.Errorf("ui templates: %w", err)
	}
	s := &server{Options: opts, pages: pages, mux: http.NewServeMux(), streams: newStreams()}
	static, err := fs.Sub(assets, "assets/static")
	if err != nil {
		return nil, err
	}
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /{$}", s.runsPage)
	s.mux.HandleFunc("GET /runs/{run}", s.runPage)
	s.mux.HandleFunc("GET /compare", s.comparePage)
	s.mux.HandleFunc("GET /api/runs", s.apiRuns)
	s.mux.HandleFunc("GET /api/runs/{run}", s.apiRun)
	s.mux.HandleFunc("GET /api/runs/{run}/artifacts", s.apiArtifacts)
	s.mux.HandleFunc("GET /api/runs/{run}/artifacts/{step}/{output}", s.download)
	s.mux.HandleFunc("GET /api/runs/{run}/artifacts/{step}/{output}/{file...}", s.download)
	s.mux.HandleFunc("GET /api/runs/{run}/logs/{step}", s.apiLog)
	s.mux.HandleFunc("GET /api/runs/{run}/events", s.apiEvents)
	s.mux.HandleFunc("GET /api/compare", s.apiCompare)
	return s.guard(s.mux), nil
}
