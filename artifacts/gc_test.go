package artifacts

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A runner killed while it created run.json leaves a run directory with only
// the record's temporary file: gc removes it once it is old, and leaves a
// fresh one (a runner creating its record right now) and real runs alone.
func TestCollectGarbageOrphanRecord(t *testing.T) {
	ctx := context.Background()
	l, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * orphanAge)
	write := func(rel string, mtime time.Time) string {
		p := filepath.Join(l.Dir(), rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("dead-1/.tmp-00aa", old)
	fresh := write("creating-1/.tmp-00bb", time.Now())
	user := write("mine/.tmp-00cc", old)
	write("mine/notes.txt", old)

	did, err := CollectGarbage(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	if len(did) != 1 || !strings.Contains(did[0], "dead-1") {
		t.Errorf("CollectGarbage did %q, want one line about dead-1", did)
	}
	if _, err := os.Stat(filepath.Join(l.Dir(), "dead-1")); !os.IsNotExist(err) {
		t.Errorf("dead-1 left: %v", err)
	}
	for _, p := range []string{fresh, user} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}
