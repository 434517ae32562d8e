package schedule

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // time zones on machines without a zoneinfo database

	"github.com/robfig/cron/v3"
)

// parser reads the five-field cron expressions of crontab(5) (minute hour
// day-of-month month day-of-week) and the descriptors @yearly, @monthly,
// @weekly, @daily, @hourly: the forms Argo's CronWorkflow accepts too.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Cron is a parsed cron expression in a time zone.
type Cron struct {
	spec *cron.SpecSchedule
	loc  *time.Location
	// wall is spec in UTC: the same fields matched against wall-clock
	// time, to find the times a daylight-saving gap skips.
	wall *cron.SpecSchedule
}

// ParseCron parses expr (five fields or a descriptor) in the IANA time
// zone tz ("" is UTC). A cron that never fires (February 30th) is an error.
func ParseCron(expr, tz string) (*Cron, error) {
	loc, err := LoadLocation(tz)
	if err != nil {
		return nil, err
	}
	expr = strings.TrimSpace(expr)
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		return nil, fmt.Errorf("invalid cron expression %q: give the time zone as timezone, not in the expression", expr)
	}
	if strings.HasPrefix(expr, "@every") {
		return nil, fmt.Errorf("invalid cron expression %q: @every has no calendar times to backfill; write the times as five fields (*/15 * * * *)", expr)
	}
	s, err := parser.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("invalid cron expression %q: %v (want five fields: minute hour day-of-month month day-of-week, such as \"0 2 * * *\", or @hourly, @daily, @weekly, @monthly, @yearly)", expr, err)
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("invalid cron expression %q", expr)
	}
	c := &Cron{spec: withLocation(spec, loc), loc: loc, wall: withLocation(spec, time.UTC)}
	if start := time.Date(2000, 1, 1, 0, 0, 0, 0, loc); c.spec.Next(start).IsZero() && c.spec.Next(start.AddDate(4, 0, 0)).IsZero() {
		return nil, fmt.Errorf("invalid cron expression %q: it names no time that exists (such as February 30th)", expr)
	}
	return c, nil
}

func withLocation(s *cron.SpecSchedule, loc *time.Location) *cron.SpecSchedule {
	c := *s
	c.Location = loc
	return &c
}

// LoadLocation loads the IANA time zone name ("" and "UTC" are UTC). Local
// is refused: a schedule's times must not depend on the machine it is on.
func LoadLocation(name string) (*time.Location, error) {
	switch name {
	case "", "UTC":
		return time.UTC, nil
	case "Local":
		return nil, fmt.Errorf("invalid time zone %q: name the zone (such as Europe/Berlin): a schedule's times must not depend on the machine", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("invalid time zone %q: want an IANA time zone name such as UTC, Europe/Berlin or America/New_York", name)
	}
	return loc, nil
}

// Location is the cron's time zone.
func (c *Cron) Location() *time.Location { return c.loc }

// Next is the first time of the cron strictly after t, in the cron's time
// zone; the zero time when there is none within five years. A wall-clock
// time that a daylight-saving gap skips is the first instant after the gap.
func (c *Cron) Next(t time.Time) time.Time {
	next := c.spec.Next(t)
	// A wall time the clock repeats (a fall-back night) fires once, at its
	// first instant, unless the cron fires every hour.
	for !next.IsZero() && c.repeated(next) {
		next = c.spec.Next(next)
	}
	next = next.In(c.loc)
	// The wall clock's next matching time, read as a wall time in loc.
	lt := t.In(c.loc)
	wallT := time.Date(lt.Year(), lt.Month(), lt.Day(), lt.Hour(), lt.Minute(), lt.Second(), lt.Nanosecond(), time.UTC)
	w := c.wall.Next(wallT)
	if w.IsZero() {
		return next
	}
	real := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, c.loc)
	if real.Hour() == w.Hour() && real.Minute() == w.Minute() && real.Day() == w.Day() {
		return next // it exists: the spec found it (or an earlier time)
	}
	// In a gap: the instant the gap ends is the start of the zone real is in.
	gapEnd, _ := real.ZoneBounds()
	if gapEnd.After(t) && (next.IsZero() || gapEnd.Before(next)) {
		return gapEnd.In(c.loc)
	}
	return next
}

// allHours is the bits of SpecSchedule.Hour of a cron that fires every hour.
const allHours = 1<<24 - 1

// repeated reports whether t is the second instant of a wall time that the
// clock repeats, for a cron that does not fire every hour.
func (c *Cron) repeated(t time.Time) bool {
	if c.spec.Hour&allHours == allHours {
		return false
	}
	start, _ := t.In(c.loc).ZoneBounds()
	if start.IsZero() {
		return false
	}
	_, before := start.Add(-time.Nanosecond).In(c.loc).Zone()
	_, now := t.In(c.loc).Zone()
	back := time.Duration(before-now) * time.Second
	return back > 0 && t.Sub(start) < back
}

// Times lists the cron's times in [from, to), oldest first, at most limit of
// them; more reports whether there were more than limit.
func (c *Cron) Times(from, to time.Time, limit int) (times []time.Time, more bool) {
	for t := c.Next(from.Add(-time.Nanosecond)); !t.IsZero() && t.Before(to); t = c.Next(t) {
		if len(times) == limit {
			return times, true
		}
		times = append(times, t)
	}
	return times, false
}

// Count is the number of the cron's times in [from, to), counted up to
// limit+1 (so a caller can tell "more than limit").
func (c *Cron) Count(from, to time.Time, limit int) int {
	n := 0
	for t := c.Next(from.Add(-time.Nanosecond)); !t.IsZero() && t.Before(to) && n <= limit; t = c.Next(t) {
		n++
	}
	return n
}
