// Package schedule is the schedule model: a pipeline kept on a cron, the
// `kind: Schedule` file that declares one (load, strict decode, validation
// with file:line field errors), and the pure computations of its times:
// the next time, every time of a range (backfill), and which times are due
// or missed at a moment under its catch-up policy.
//
// Times are computed in the schedule's time zone (an IANA name, loaded from
// the tzdata embedded in the binary). Across daylight-saving transitions:
// a time the clock skips (02:30 on a spring-forward night) fires once, at
// the end of the gap (03:00); a time the clock repeats fires at each real
// instant that matches (an hourly schedule fires at both 02:00 of a
// fall-back night, a daily 01:30 job once, at the first).
//
// The package does no I/O beyond reading a schedule file: keeping schedules
// and firing them is the business of the backends.
package schedule
