// Package ui is the web UI of `pipectl ui`: server-rendered pages, a JSON
// API and downloads over the runs of one artifact store. Its assets (HTML
// templates, one stylesheet, one small script, an icon) are embedded; there
// is no build step and nothing to install.
//
// # Pages
//
//	/                         runs, newest first; ?pipeline=P&status=S filter
//	/runs/RUN                 a run: the DAG (an SVG laid out by depth, see
//	                          Layout), a step (?step=STEP, default: a running,
//	                          else a failed, else the last step) with its
//	                          outputs and previews, and its log; without
//	                          ?step a live page moves on to the step that
//	                          default picks as the run goes on
//	/runs/RUN?file=OUT/PATH   the preview of a file of a directory output
//	/compare?runs=A,B,…       params and metrics side by side (also ?run=A&run=B)
//
// A page asked with ?part=live (a run) or ?part=table (the runs list) is
// only the part the script swaps in when something changed.
//
// # JSON API (GET only)
//
//	/api/runs[?pipeline=P&status=S]  `pipectl runs ls -o json`: [{"id","pipeline","status","started","finished","on"}]
//	/api/runs/RUN                    `pipectl runs get RUN -o json`: the run record; RUN may be "latest"
//	/api/runs/RUN/artifacts          `pipectl artifacts ls RUN -o json`: [{"step","output","type","uri","size","sha256"}]
//	/api/runs/RUN/artifacts/STEP/OUTPUT[/PATH]
//	                                 the bytes of a file output, or of the file PATH of a
//	                                 directory output (a whole directory output: a tar);
//	                                 Range requests, ETag "<sha256>"; ?inline=1 shows an
//	                                 image or text in the browser, else an attachment
//	/api/runs/RUN/logs/STEP[?offset=N]
//	                                 text/plain: the step's log from byte N (default: its last
//	                                 MiB); X-Log-Start and X-Log-End give the bytes sent, so
//	                                 the next poll asks for ?offset=<X-Log-End>. X-Log-Source
//	                                 is "store", or "pod" for a running step whose log is not
//	                                 stored yet (a cluster step's, read from its pod); when it
//	                                 changes, the offsets start over
//	/api/runs/RUN/events             text/event-stream: "run" events carry the record (as
//	                                 /api/runs/RUN) when it changed; "end" follows the record
//	                                 of a run no longer running, then the stream closes;
//	                                 "problem" says why a record could not be read; the
//	                                 streams of a run share one poller; at most 16 streams
//	                                 per client and 64 in all (past: 429)
//	/api/compare?runs=A,B            {"runs": [runs ls entries], "params": [Row], "metrics": [Row]},
//	                                 Row = {"source"?, "name", "values": [string|null per run], "differs"}
//
// Errors are {"error": "..."} with 400 (a bad name or value, a query
// parameter an endpoint does not take), 404 (no such run, step, output or
// log), 429 (too many event streams) or 500.
//
// # Safety
//
// Every request is GET or HEAD (anything else: 405). An object is served
// only when the run record lists the output and, for a file inside a
// directory output, the output's metadata lists the file; its key then goes
// through the store's own key checks. Nothing from a URL becomes a key by
// itself. Artifacts are served with Content-Security-Policy: sandbox, and
// only images and plain text inline. Pages allow only their own scripts and
// styles. Without a token the server answers only requests whose Host is
// localhost or a loopback address (no DNS rebinding). With a token, every
// request carries it: Authorization: Bearer TOKEN, or the HttpOnly cookie
// set when a browser opens a URL with ?token=TOKEN (which then redirects to
// the URL without it). The browser never sees store credentials: it gets
// bytes through the server.
package ui
