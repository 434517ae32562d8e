// Package argorun follows and records pipeline runs on Argo: what `pipectl
// run --on argo` and the run-record reader (package runstore) share.
//
// # Who writes what
//
//   - `pipectl run --on argo` writes <run>/run.json when it submits (status
//     Running, on argo, every step Pending) and, when the workflow ended,
//     the final record from the workflow's status (Record): step status,
//     attempts, exit codes and times from the workflow's nodes (each step's
//     task named by the workflow's pipectl.dev/steps annotation), and each
//     succeeded step's outputs, typed, from its outputs record
//     (<run>/<step>/outputs.json, written by whoever published them); a
//     step whose record has "cachedFrom" was reused from that run (package
//     stepcache) and shows "cached": true and "cachedFrom" in the record.
//   - `pipectl exec` in each step pod uploads its own log (the program's
//     stdout and stderr and exec's messages) to <run>/<step>/step.log when
//     it ends, success or not, so a run's logs outlive its pods.
//   - A distributed step's launcher pod (`pipectl launch`) uploads its own
//     log, which carries every rank's "[rank N]" lines, to
//     <run>/<step>/step.log (<run>/<step>[i]/step.log for an iteration);
//     the follower (`pipectl run --on argo`) uploads what it streamed for
//     a step that has no step.log yet (a launcher pod killed before it
//     could). The follower streams a loop iteration's pods under STEP[i].
//   - `pipectl runs`, `pipectl logs`, `pipectl artifacts` and `pipectl ui`
//     read records through package runstore; for a record still Running it
//     refreshes it from the workflow (Refresh) when the cluster is reachable
//     and the workflow still exists, and writes the final record back once
//     the workflow ended (so a detached run gets its final record the first
//     time someone looks at it).
//   - A schedule's CronWorkflow (`pipectl schedule create|apply --on
//     argo`) makes workflows no pipectl process submitted, and so does
//     `schedule backfill --on argo` (which only waits): such a workflow
//     records itself (argo.CompileCron compiles it so): a lifecycle hook
//     as it starts and its exit handler as it ends run `pipectl schedule
//     record-run` (RecordItself) in the pipectl image under the launcher's
//     ServiceAccount, which reads the workflow and writes the record
//     ScheduledRecord makes: the schedule (the workflow's
//     pipectl.dev/schedule label) and the time Argo scheduled it for (its
//     workflows.argoproj.io/scheduled-time annotation), the steps from the
//     workflow's nodes (Record), Running, then final. The readers of the
//     schedule (ScheduledRuns: `schedule ls|get|delete --on argo`) write
//     the same record when it is missing (a record pod that could not
//     run), and Refresh completes a Running one like a detached run's.
//
// A workflow submitted by `run --on argo` compiles no record pod (its
// follower records it); the finally steps are its only onExit.
package argorun
