package schedulestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/pipeline/schedule"
)

// Prefix is the store prefix of every schedule.
const Prefix = ".schedules/"

// ErrNotFound is returned (wrapped) for a schedule the store does not hold.
var ErrNotFound = artifacts.ErrNotFound

func scheduleKey(name string) string { return Prefix + name + "/schedule.json" }
func cursorKey(name string) string   { return Prefix + name + "/cursor.json" }
func timesPrefix(name string) string { return Prefix + name + "/times/" }

// timeStamp names a claim: the time in UTC, sortable.
const timeStamp = "20060102T150405Z"

// ClaimKey is the key of the claim of schedule name's time t.
func ClaimKey(name string, t time.Time) string {
	return timesPrefix(name) + t.UTC().Format(timeStamp) + ".json"
}

// checkName refuses a name that would reach outside its folder.
func checkName(name string) error {
	if msg := schedule.CheckName(name); msg != "" {
		return fmt.Errorf("schedule name: %s", msg)
	}
	return nil
}

// Put stores s (validated), replacing the schedule of that name.
func Put(ctx context.Context, st artifacts.Store, s *schedule.Schedule) error {
	if err := s.Validate(); err != nil {
		return err
	}
	return artifacts.PutJSON(ctx, st, scheduleKey(s.Name), s)
}

// Get reads schedule name.
func Get(ctx context.Context, st artifacts.Store, name string) (*schedule.Schedule, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	var s schedule.Schedule
	if err := artifacts.GetJSON(ctx, st, scheduleKey(name), &s); err != nil {
		if errors.Is(err, artifacts.ErrNotFound) {
			return nil, fmt.Errorf("no schedule %q in %s: %w", name, st.Root(), ErrNotFound)
		}
		return nil, err
	}
	if s.Name != name {
		return nil, &artifacts.CorruptError{URI: st.URI(scheduleKey(name)), Err: fmt.Errorf("its name is %q, not its folder's", s.Name)}
	}
	return &s, nil
}

// List reads every schedule, by name; a corrupt one is left out with a
// line to warn (when not nil).
func List(ctx context.Context, st artifacts.Store, warn io.Writer) ([]*schedule.Schedule, error) {
	dirs, err := st.List(ctx, Prefix, false)
	if err != nil {
		return nil, err
	}
	var out []*schedule.Schedule
	for _, d := range dirs {
		if !d.Dir {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(d.Key, Prefix), "/")
		s, err := Get(ctx, st, name)
		switch {
		case errors.Is(err, artifacts.ErrNotFound):
			continue // deleted, or being created
		case err != nil:
			if warn != nil {
				fmt.Fprintf(warn, "warning: skipping schedule %s: %v\n", name, err)
			}
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// Delete removes schedule name with its cursor and claims (its runs stay).
func Delete(ctx context.Context, st artifacts.Store, name string) error {
	if _, err := Get(ctx, st, name); err != nil {
		return err
	}
	// The schedule first: a scheduler listing meanwhile no longer fires it.
	if err := st.Delete(ctx, scheduleKey(name)); err != nil {
		return err
	}
	objs, err := st.List(ctx, Prefix+name+"/", true)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := st.Delete(ctx, o.Key); err != nil {
			return err
		}
	}
	return nil
}

// Cursor is the newest time schedule name's scheduler decided on (the
// zero time when none).
func Cursor(ctx context.Context, st artifacts.Store, name string) (time.Time, error) {
	var c struct {
		Time time.Time `json:"time"`
	}
	err := artifacts.GetJSON(ctx, st, cursorKey(name), &c)
	if errors.Is(err, artifacts.ErrNotFound) {
		return time.Time{}, nil
	}
	return c.Time, err
}

// SetCursor records t as the newest time decided on for schedule name.
func SetCursor(ctx context.Context, st artifacts.Store, name string, t time.Time) error {
	return artifacts.PutJSON(ctx, st, cursorKey(name), map[string]time.Time{"time": t})
}

// Claim is the record that a schedule's time was run.
type Claim struct {
	// Schedule and Time say which; Time in RFC 3339 in the schedule's zone.
	Schedule string `json:"schedule"`
	Time     string `json:"time"`
	// Run is the id of the run started for it.
	Run string `json:"run"`
	// By says what started it: serve or backfill.
	By string `json:"by"`
	// Claimed is when the claim was made.
	Claimed time.Time `json:"claimed"`
}

// ErrClaimed is returned (wrapped) by CreateClaim for a time that has a
// claim already.
var ErrClaimed = fs.ErrExist

// CreateClaim records c before its run starts, exclusively: for a time
// claimed already it fails with an error for which errors.Is(err,
// ErrClaimed) holds.
func CreateClaim(ctx context.Context, st artifacts.Store, at time.Time, c Claim) error {
	b, err := artifacts.MarshalShallow(c)
	if err != nil {
		return err
	}
	return st.Create(ctx, ClaimKey(c.Schedule, at), strings.NewReader(string(b)), int64(len(b)))
}

// Claims lists the claims of schedule name, oldest time first.
func Claims(ctx context.Context, st artifacts.Store, name string) ([]Claim, error) {
	objs, err := st.List(ctx, timesPrefix(name), false)
	if err != nil {
		return nil, err
	}
	var out []Claim
	for _, o := range objs {
		if o.Dir || !strings.HasSuffix(o.Key, ".json") {
			continue
		}
		var c Claim
		if err := artifacts.GetJSON(ctx, st, o.Key, &c); err != nil {
			if errors.Is(err, artifacts.ErrNotFound) {
				continue
			}
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Claimed is the set of claimed times of schedule name, as ClaimKey
// stamps them (UTC), for membership tests.
func Claimed(ctx context.Context, st artifacts.Store, name string) (map[string]bool, error) {
	objs, err := st.List(ctx, timesPrefix(name), false)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, o := range objs {
		out[strings.TrimSuffix(strings.TrimPrefix(o.Key, timesPrefix(name)), ".json")] = true
	}
	return out, nil
}

// Stamp is t as Claimed's keys name it.
func Stamp(t time.Time) string { return t.UTC().Format(timeStamp) }
