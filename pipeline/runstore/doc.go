// Package runstore is the one reader of run records: `pipectl runs`,
// `pipectl logs`, `pipectl artifacts` and `pipectl ui` read every record
// through a Reader, so they all see the same thing.
//
// A Reader reads <run>/run.json from the artifact store (see package
// artifacts) and:
//
//   - resolves "latest" to the newest run (the greatest started time; the
//     greater id among equals), and "latest/REST" in artifact references;
//   - refreshes a cluster run whose record still says Running from its
//     workflow (argorun.Refresh), in the namespace the record names, when
//     the cluster is reachable; once the workflow ended, the final record is
//     written back, so a detached run gets its final record (statuses,
//     exit codes, typed outputs) the first time anyone reads it;
//   - says once, on its warning writer, when running cluster runs could not
//     be refreshed and show their last recorded status.
//
// A record the cluster cannot refresh is returned as stored; that is never
// an error.
package runstore
