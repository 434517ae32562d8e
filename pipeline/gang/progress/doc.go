// Package progress watches the ranks of a gang: what each printed last and
// when (Tracker.Writer), and the metrics each reports by appending JSON
// lines to the file named by PIPECTL_METRICS (Files), kept as a bounded
// time series (Series). A gang none of whose ranks made progress for its
// stall timeout is stalled (Tracker.Idle, Tracker.Ranks name each rank's
// state). Both the local gang and the JobSet launcher use it; it starts no
// process and imports no Kubernetes client.
//
// A metric line is one JSON object whose values are numbers, at most
// MaxLine bytes and MaxMetrics keys: "step", when there, is the x-axis (an
// integer), the others are scalar metrics ("epoch", "loss", …). Any other
// line is counted as malformed and skipped. Memory stays bounded whatever
// a rank writes: a line is read in pieces of at most MaxLine bytes and the
// series keeps at most MaxPoints points, thinned evenly as it grows.
package progress
