// Package schedulestore keeps the schedules of the local backend in the
// artifact store, beside the run records:
//
//	.schedules/NAME/schedule.json          the schedule (schedule.Schedule)
//	.schedules/NAME/cursor.json            the newest time its scheduler decided on
//	.schedules/NAME/times/TIME.json        one claim per time it ran (TIME in UTC, 20060102T150405Z)
//
// Every object is written whole or not at all (Store.Put); a claim is
// created exclusively (Store.Create) before its run starts, so two
// schedulers, or one restarted, never run a schedule twice for one time.
package schedulestore
