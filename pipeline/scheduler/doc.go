// Package scheduler runs the schedules of the local backend: Serve fires
// what is due (pipectl schedule serve), Backfill runs every time of a
// range that has no run yet (pipectl schedule backfill).
//
// A time is claimed in the store (schedulestore.CreateClaim, exclusive)
// before its run starts, so it never runs twice: not when the scheduler is
// killed and restarted, not when two schedulers or a scheduler and a
// backfill meet. After a restart the times missed meanwhile are decided by
// the schedule's catch-up policy (schedule.Due), from the cursor stored
// with the schedule.
//
// Concurrency policies hold among the runs one scheduler process started
// (its runs end with it): Forbid skips a time while one of them runs,
// Replace cancels them first. A backfill runs its times with its own
// parallelism.
package scheduler
