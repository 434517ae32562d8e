package schedulestore

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/pipeline/schedule"
)

func TestStore(t *testing.T) {
	ctx := context.Background()
	st, err := artifacts.NewLocal(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	s := &schedule.Schedule{Name: "nightly", Pipeline: "/p.yaml", Cron: "0 2 * * *"}
	s.Default()
	if err := Put(ctx, st, s); err != nil {
		t.Fatal(err)
	}
	bad := *s
	bad.Cron = "0 25 * * *"
	if err := Put(ctx, st, &bad); err == nil {
		t.Error("Put of a bad cron: no error")
	}
	got, err := Get(ctx, st, "nightly")
	if err != nil || got.Cron != "0 2 * * *" {
		t.Fatalf("Get: %+v, %v", got, err)
	}
	if _, err := Get(ctx, st, "../x"); err == nil {
		t.Error("Get of ../x: no error")
	}
	if _, err := Get(ctx, st, "other"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of a missing schedule: %v", err)
	}
	at := time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)
	c := Claim{Schedule: "nightly", Time: schedule.FormatTime(at), Run: "r1", By: "serve"}
	if err := CreateClaim(ctx, st, at, c); err != nil {
		t.Fatal(err)
	}
	c.Run = "r2"
	if err := CreateClaim(ctx, st, at, c); !errors.Is(err, ErrClaimed) {
		t.Errorf("second claim of one time: %v, want ErrClaimed", err)
	}
	claims, err := Claims(ctx, st, "nightly")
	if err != nil || len(claims) != 1 || claims[0].Run != "r1" {
		t.Errorf("Claims: %+v, %v", claims, err)
	}
	if err := SetCursor(ctx, st, "nightly", at); err != nil {
		t.Fatal(err)
	}
	if cur, err := Cursor(ctx, st, "nightly"); err != nil || !cur.Equal(at) {
		t.Errorf("Cursor: %v, %v", cur, err)
	}
	list, err := List(ctx, st, nil)
	if err != nil || len(list) != 1 {
		t.Errorf("List: %d, %v", len(list), err)
	}
	if err := Delete(ctx, st, "nightly"); err != nil {
		t.Fatal(err)
	}
	if left, _ := st.List(ctx, Prefix, true); len(left) != 0 {
		t.Errorf("after Delete: %v", left)
	}
}
