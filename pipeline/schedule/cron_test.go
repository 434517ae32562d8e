package schedule

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func mustCron(t *testing.T, expr, tz string) *Cron {
	t.Helper()
	c, err := ParseCron(expr, tz)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func formatAll(ts []time.Time) []string {
	var out []string
	for _, t := range ts {
		out = append(out, FormatTime(t))
	}
	return out
}

func TestParseCronRejects(t *testing.T) {
	for _, tc := range []struct{ expr, tz, want string }{
		{"0 25 * * *", "", "invalid cron expression \"0 25 * * *\""},
		{"* * * *", "", "want five fields"},
		{"0 2 * * * *", "", "invalid cron expression"},
		{"CRON_TZ=Europe/Berlin 0 2 * * *", "", "give the time zone as timezone"},
		{"@every 5m", "", "@every has no calendar times"},
		{"0 0 30 2 *", "", "names no time that exists"},
		{"0 2 * * *", "Mars/Olympus", "invalid time zone \"Mars/Olympus\""},
		{"0 2 * * *", "Local", "invalid time zone \"Local\""},
	} {
		_, err := ParseCron(tc.expr, tc.tz)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseCron(%q, %q) = %v, want an error containing %q", tc.expr, tc.tz, err, tc.want)
		}
	}
}

func TestTimes(t *testing.T) {
	c := mustCron(t, "0 2 * * *", "UTC")
	got, more := c.Times(utc("2026-01-01T02:00:00Z"), utc("2026-01-04T02:00:00Z"), 10)
	want := []string{"2026-01-01T02:00:00Z", "2026-01-02T02:00:00Z", "2026-01-03T02:00:00Z"}
	if diff := cmp.Diff(want, formatAll(got)); diff != "" || more {
		t.Errorf("Times [from, to) (-want +got):\n%s (more %v)", diff, more)
	}
	got, more = c.Times(utc("2026-01-01T00:00:00Z"), utc("2026-02-01T00:00:00Z"), 5)
	if len(got) != 5 || !more {
		t.Errorf("Times with limit 5 = %d times, more %v; want 5, true", len(got), more)
	}
	if n := c.Count(utc("2026-01-01T00:00:00Z"), utc("2027-01-01T00:00:00Z"), 10000); n != 365 {
		t.Errorf("Count of a daily cron over 2026 = %d, want 365", n)
	}
	minutely := mustCron(t, "* * * * *", "")
	if n := minutely.Count(utc("2026-01-01T00:00:00Z"), utc("2026-02-01T00:00:00Z"), 10000); n != 10001 {
		t.Errorf("Count stops at limit+1: got %d, want 10001", n)
	}
}

// Europe/Berlin springs forward on 2026-03-29 at 02:00 (to 03:00) and falls
// back on 2026-10-25 at 03:00 (to 02:00).
func TestDaylightSaving(t *testing.T) {
	for _, tc := range []struct {
		name, expr string
		from, to   string
		want       []string
	}{
		{
			name: "a daily time in the spring gap fires once, at the gap's end",
			expr: "30 2 * * *", from: "2026-03-28T00:00:00+01:00", to: "2026-03-31T00:00:00+02:00",
			want: []string{"2026-03-28T02:30:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"},
		},
		{
			name: "an hourly cron skips no hour and fires no hour twice in spring",
			expr: "0 * * * *", from: "2026-03-29T00:00:00+01:00", to: "2026-03-29T05:00:00+02:00",
			want: []string{"2026-03-29T00:00:00+01:00", "2026-03-29T01:00:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-29T04:00:00+02:00"},
		},
		{
			name: "every 20 minutes in the gap: one run at its end",
			expr: "*/20 2 * * *", from: "2026-03-29T00:00:00+01:00", to: "2026-03-29T05:00:00+02:00",
			want: []string{"2026-03-29T03:00:00+02:00"},
		},
		{
			name: "an hourly cron fires at both real 02:00 of the fall-back night",
			expr: "0 * * * *", from: "2026-10-25T01:00:00+02:00", to: "2026-10-25T04:00:00+01:00",
			want: []string{"2026-10-25T01:00:00+02:00", "2026-10-25T02:00:00+02:00", "2026-10-25T02:00:00+01:00", "2026-10-25T03:00:00+01:00"},
		},
		{
			name: "a daily time in the repeated hour fires once",
			expr: "30 2 * * *", from: "2026-10-24T00:00:00+02:00", to: "2026-10-27T00:00:00+01:00",
			want: []string{"2026-10-24T02:30:00+02:00", "2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustCron(t, tc.expr, "Europe/Berlin")
			got, _ := c.Times(utc(tc.from), utc(tc.to), 100)
			if diff := cmp.Diff(tc.want, formatAll(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for i := 1; i < len(got); i++ {
				if !got[i].After(got[i-1]) {
					t.Errorf("times not strictly increasing: %v then %v", got[i-1], got[i])
				}
			}
		})
	}
}

func TestDue(t *testing.T) {
	c := mustCron(t, "0 * * * *", "UTC")
	after := utc("2026-01-01T00:00:00Z")
	now := utc("2026-01-01T05:00:30Z") // 01:00..04:00 missed, 05:00 on time
	for _, tc := range []struct {
		catchUp string
		fire    []string
		skipped int
	}{
		{CatchUpAll, []string{"2026-01-01T01:00:00Z", "2026-01-01T02:00:00Z", "2026-01-01T03:00:00Z", "2026-01-01T04:00:00Z", "2026-01-01T05:00:00Z"}, 0},
		{CatchUpLatest, []string{"2026-01-01T04:00:00Z", "2026-01-01T05:00:00Z"}, 3},
		{CatchUpNone, []string{"2026-01-01T05:00:00Z"}, 4},
	} {
		d, err := Due(c, after, now, tc.catchUp, DefaultLate)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.fire, formatAll(d.Fire)); diff != "" || d.Skipped != tc.skipped || !d.Cursor.Equal(utc("2026-01-01T05:00:00Z")) {
			t.Errorf("%s: (-want +got):\n%s skipped %d (want %d) cursor %v", tc.catchUp, diff, d.Skipped, tc.skipped, d.Cursor)
		}
	}
	// Nothing due: the cursor stays.
	d, _ := Due(c, utc("2026-01-01T05:00:00Z"), utc("2026-01-01T05:59:00Z"), CatchUpAll, DefaultLate)
	if len(d.Fire) != 0 || !d.Cursor.Equal(utc("2026-01-01T05:00:00Z")) {
		t.Errorf("nothing due: got %+v", d)
	}
	// A year of minutes missed with catch-up all: bounded, oldest first.
	m := mustCron(t, "* * * * *", "")
	d, _ = Due(m, utc("2025-01-01T00:00:00Z"), utc("2026-01-01T00:00:00Z"), CatchUpAll, DefaultLate)
	if len(d.Fire) != MaxCatchUp || !d.Cursor.Equal(d.Fire[MaxCatchUp-1]) || !d.Fire[0].Equal(utc("2025-01-01T00:01:00Z")) {
		t.Errorf("catch-up all of a year of minutes: %d times, cursor %v", len(d.Fire), d.Cursor)
	}
	if _, err := Due(c, after, now, "some", DefaultLate); err == nil {
		t.Error("unknown catch-up policy: no error")
	}
}
