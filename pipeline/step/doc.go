// Package step is the one step executor: every execution of a step, by
// the local runner, by `pipectl exec` in a step or rank pod and by `pipectl
// launch` in a launcher pod, goes through Executor.Execute:
//
//	fingerprint → look up → reuse (cached: done) → run → publish → cache entry → log
//
// What differs is how the program runs, a Strategy: Process (one child
// process, locally or in a step pod), Gang (a distributed step's rank
// processes on this machine), Node (one node of a gang in a rank pod), or
// the Kubernetes launcher's JobSet (package launcher, through StrategyFunc).
// The fingerprint and the cache entries are package stepcache's; the log
// kept at <run>/<step>/step.log is Log.
//
// The package links no Kubernetes client: the local runner uses it.
package step
