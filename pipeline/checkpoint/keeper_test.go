package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/miniotest"
)

func newKeeper(t *testing.T, store artifacts.Store, run string) *Keeper {
	t.Helper()
	return &Keeper{Store: store, Run: run, Step: "train", Dir: filepath.Join(t.TempDir(), "checkpoint")}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// read returns the files of dir as path=content lines, sorted.
func read(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel)+"="+string(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, " ")
}

func localStore(t *testing.T) artifacts.Store {
	t.Helper()
	s, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func keys(t *testing.T, s artifacts.Store, prefix string) string {
	t.Helper()
	objs, err := s.List(context.Background(), prefix, true)
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, o := range objs {
		ks = append(ks, strings.TrimPrefix(o.Key, prefix))
	}
	return strings.Join(ks, " ")
}

// TestSyncRestore: what a sync stored comes back in a fresh directory,
// half-written files (.tmp, dot names) are left out, an unchanged
// directory is not stored again, and only the latest Keep generations stay.
func TestSyncRestore(t *testing.T) { testSyncRestore(t, localStore(t)) }

func testSyncRestore(t *testing.T, store artifacts.Store) {
	ctx := context.Background()
	k := newKeeper(t, store, "r1")
	k.Keep = 2
	if r, err := k.Restore(ctx); err != nil || r.Generation != 0 {
		t.Fatalf("Restore of nothing = %v, %v; want generation 0", r, err)
	}
	write(t, k.Dir, "model.pt", "epoch1")
	write(t, k.Dir, "opt/state.pt", "s1")
	write(t, k.Dir, "model.pt.tmp", "half")
	write(t, k.Dir, ".partial/x", "half")
	if gen, err := k.Sync(ctx); gen != 1 || err != nil {
		t.Fatalf("Sync = %d, %v; want generation 1", gen, err)
	}
	if gen, err := k.Sync(ctx); gen != 0 || err != nil {
		t.Fatalf("Sync of an unchanged directory = %d, %v; want 0", gen, err)
	}
	for i := 2; i <= 4; i++ {
		write(t, k.Dir, "model.pt", "epoch"+string(rune('0'+i)))
		if gen, err := k.Sync(ctx); gen != i || err != nil {
			t.Fatalf("Sync = %d, %v; want generation %d", gen, err, i)
		}
	}
	want := "00000003.json 00000003/model.pt 00000003/opt/state.pt 00000004.json 00000004/model.pt 00000004/opt/state.pt"
	if got := keys(t, store, Prefix("r1", "train")); got != want {
		t.Errorf("store holds %q, want the latest 2 generations %q", got, want)
	}
	k2 := newKeeper(t, store, "r1")
	write(t, k2.Dir, "stale", "x")
	r, err := k2.Restore(ctx)
	if err != nil || r.Generation != 4 || r.Files != 2 {
		t.Fatalf("Restore = %v, %v; want generation 4 with 2 files", r, err)
	}
	if got := read(t, k2.Dir); got != "model.pt=epoch4 opt/state.pt=s1" {
		t.Errorf("restored %q", got)
	}
}

// TestRestoreSkipsIncomplete: a sync cut short (files but no manifest) and
// a damaged generation are passed over for the last complete one.
func TestRestoreSkipsIncomplete(t *testing.T) { testRestoreSkipsIncomplete(t, localStore(t)) }

func testRestoreSkipsIncomplete(t *testing.T, store artifacts.Store) {
	ctx := context.Background()
	k := newKeeper(t, store, "r1")
	k.Keep = 3
	write(t, k.Dir, "model.pt", "good")
	if _, err := k.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	write(t, k.Dir, "model.pt", "damaged!")
	if _, err := k.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	p := Prefix("r1", "train")
	// Generation 2's file loses its bytes; generation 3 never got its manifest.
	if err := store.Put(ctx, p+"00000002/model.pt", strings.NewReader("oops"), 4); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, p+"00000003/model.pt", strings.NewReader("half"), 4); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, p+"00000003/other.pt", strings.NewReader("half"), 4); err != nil {
		t.Fatal(err)
	}
	k2 := newKeeper(t, store, "r1")
	r, err := k2.Restore(ctx)
	if err != nil || r.Generation != 1 {
		t.Fatalf("Restore = %v, %v; want generation 1", r, err)
	}
	if got := read(t, k2.Dir); got != "model.pt=good" {
		t.Errorf("restored %q, want generation 1's", got)
	}
	// The next sync is generation 3 and clears the leftover folder's half file.
	write(t, k2.Dir, "model.pt", "next")
	if gen, err := k2.Sync(ctx); gen != 3 || err != nil {
		t.Fatalf("Sync = %d, %v; want 3", gen, err)
	}
	if got := read(t, k2.Dir); got != "model.pt=next" {
		t.Errorf("dir %q", got)
	}
	if got := keys(t, store, p); got != "00000003.json 00000003/model.pt" {
		t.Errorf("store holds %q: want generation 3 alone (keep 1), without the leftover of the cut-short sync", got)
	}
}

// TestRestoreFrom: a run without a checkpoint of its own starts from the
// run it resumes; its first sync stores that checkpoint as its own.
func TestRestoreFrom(t *testing.T) { testRestoreFrom(t, localStore(t)) }

func testRestoreFrom(t *testing.T, store artifacts.Store) {
	ctx := context.Background()
	old := newKeeper(t, store, "r1")
	write(t, old.Dir, "model.pt", "epoch3")
	if _, err := old.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	k := newKeeper(t, store, "r2")
	k.From = "r1"
	r, err := k.Restore(ctx)
	if err != nil || r.Run != "r1" || r.Generation != 1 {
		t.Fatalf("Restore = %v, %v; want r1's generation 1", r, err)
	}
	if gen, err := k.Sync(ctx); gen != 1 || err != nil {
		t.Fatalf("Sync after a restore from another run = %d, %v; want 1", gen, err)
	}
	if got := keys(t, store, Prefix("r2", "train")); got != "00000001.json 00000001/model.pt" {
		t.Errorf("r2 holds %q", got)
	}
	time.Sleep(10 * time.Millisecond)
	k3 := newKeeper(t, store, "r2")
	k3.From = "r1"
	if r, err := k3.Restore(ctx); err != nil || r.Run != "r2" {
		t.Errorf("Restore = %v, %v; want r2's own", r, err)
	}
}

// TestS3: the same on a real MinIO (an S3 store lists generation folders
// as common prefixes).
func TestS3(t *testing.T) {
	srv := miniotest.Start(t)
	if err := srv.MakeBucket(t.Context(), "ckpt"); err != nil {
		t.Fatal(err)
	}
	for name, test := range map[string]func(*testing.T, artifacts.Store){
		"SyncRestore": testSyncRestore, "RestoreSkipsIncomplete": testRestoreSkipsIncomplete, "RestoreFrom": testRestoreFrom,
	} {
		t.Run(name, func(t *testing.T) {
			store, err := artifacts.NewS3(t.Context(), "ckpt", "runs/"+name, artifacts.S3Options{Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey})
			if err != nil {
				t.Fatal(err)
			}
			test(t, store)
		})
	}
}
