// Package local runs a pipeline on this machine with no cluster: each step
// is a subprocess (a distributed step a gang of rank processes), independent
// steps run in parallel, and artifacts and the run record go to a store.
//
// A loop step's iterations get their records (STEP[i], with the item) when
// the step starts, in the record right after the loop step's own record,
// which ends Succeeded once every iteration succeeded, else Failed (its
// message counts them). Iterations run at most loop.parallelism and the
// run's Parallelism at once; a failed one does not stop the others. Each
// has its own work directory, log, cache fingerprint and, for a
// distributed step, gang. The finally steps run once the other steps have
// ended, with {{run.status}} and {{run.failedSteps}} from their records;
// after a cancel they run until Runner.FinallyGrace has passed.
package local
