// Package artifacts is pipectl's artifact store: where step outputs, their
// metadata and run records live.
//
// A store is a flat object store addressed by slash-separated keys below a root
// URI (file:///path or s3://bucket/prefix). The layout is the same everywhere:
//
//	<root>/<run-id>/run.json                      the run record
//	<root>/<run-id>/<step>/<output>               a file output, or
//	<root>/<run-id>/<step>/<output>/<file>...     a directory output, one object per file
//	<root>/<run-id>/<step>/<output>.meta.json     the output's metadata, written last
//	<root>/<run-id>/<step>/step.log               the step's log
//	<root>/.cache/<fingerprint>.json              the step cache index
//
// Step and output names are DNS-1123 labels, so they never contain a dot and
// never collide with the metadata and log objects.
package artifacts
