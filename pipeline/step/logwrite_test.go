package step

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

// meetingStore is a store whose Puts of the cache entry and of the step's
// log each wait, up to a while, for the other to start; failCache makes the
// cache entry's Put fail.
type meetingStore struct {
	artifacts.Store
	cache, log chan struct{}
	failCache  bool
}

func (s *meetingStore) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	var mine, other chan struct{}
	switch {
	case strings.HasPrefix(key, ".cache/"):
		mine, other = s.cache, s.log
	case key == record.LogKey("r1", "train"):
		mine, other = s.log, s.cache
	}
	if mine != nil {
		select {
		case <-mine:
		default:
			close(mine)
		}
		select {
		case <-other:
		case <-time.After(3 * time.Second):
			return fmt.Errorf("put %s: the other write never started alongside", key)
		}
		if s.failCache && mine == s.cache {
			return errors.New("disk full")
		}
	}
	return s.Store.Put(ctx, key, r, size)
}

// A step that ran stores its log while its cache entry is written, not
// after; when that write fails, the stored log says so (it is stored again).
func TestExecuteStoresTheLogAlongsideTheRecords(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprint("cache entry fails=", fail), func(t *testing.T) {
			ctx := context.Background()
			local, _ := artifacts.NewLocal(t.TempDir())
			store := &meetingStore{Store: local, cache: make(chan struct{}), log: make(chan struct{}), failCache: fail}
			j := newJob(t, store, &program{})
			j.Warnf = func(format string, args ...any) { fmt.Fprintf(j.Log, "warning: "+format+"\n", args...) }
			res, err := (&Executor{Store: store}).Execute(ctx, j)
			if err != nil || res.Attempts != 1 {
				t.Fatalf("Execute = %+v, %v", res, err)
			}
			b, err := readAll(ctx, local, record.LogKey("r1", "train"))
			if err != nil {
				t.Fatal(err)
			}
			want := "run 1 of train\n"
			if fail {
				want += "warning: cannot write the cache entry of step train: disk full\n"
			}
			if string(b) != want {
				t.Errorf("the stored log is %q, want %q", b, want)
			}
		})
	}
}
