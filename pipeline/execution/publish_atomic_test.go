package execution

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// fullStore is a Store whose disk fills up: once left bytes have been
// put, every Put fails with ENOSPC, as a local store's write does. It
// records the keys put whole.
type fullStore struct {
	artifacts.Store
	mu   sync.Mutex
	left int64
	put  []string
}

func (s *fullStore) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := s.Store.Put(ctx, key, &fullReader{s: s, key: key, r: r}, size); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put = append(s.put, key)
	return nil
}

type fullReader struct {
	s   *fullStore
	key string
	r   io.Reader
}

func (f *fullReader) Read(p []byte) (int, error) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	if f.s.left <= 0 {
		return 0, &fs.PathError{Op: "write", Path: f.key, Err: syscall.ENOSPC}
	}
	p = p[:min(int64(len(p)), f.s.left)]
	n, err := f.r.Read(p)
	f.s.left -= int64(n)
	return n, err
}

// storedFiles lists the regular files below dir (the local store's disk).
func storedFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// A step whose second output hits a full disk leaves none of its outputs
// in the store: not the first output, which was stored whole, nor its
// metadata, nor an outputs record (also not an earlier attempt's). The
// error names the output and the cause.
func TestPublishFullDiskLeavesNothing(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	local, err := artifacts.NewLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	// An earlier attempt's record, naming objects this attempt overwrites.
	if err := recordstore.WriteOutputs(ctx, local, "run-1", "train", nil); err != nil {
		t.Fatal(err)
	}
	store := &fullStore{Store: local, left: 4 << 10}
	rt := &Runtime{Store: store}
	inv := &components.Invocation{Run: "run-1", Step: "train", Component: &components.Program{
		Name:    "train",
		Outputs: []components.ProgramIO{{Name: "model", Type: components.TypeModel}, {Name: "data", Type: components.TypeDataset}},
	}}
	ws := Workspace{Dir: t.TempDir()}
	dir := ws.OutputDir(0)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, size := range map[string]int{"model": 1000, "data": 64 << 10} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	records, err := rt.Publish(ctx, inv, ws)
	if err == nil {
		t.Fatalf("Publish on a full disk succeeded: %v", records)
	}
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), `publish output "data"`) || !strings.Contains(err.Error(), "no space left on device") {
		t.Errorf("error %q: want it to name output \"data\" and ENOSPC", err)
	}
	if records != nil {
		t.Errorf("Publish returned records %v for a failed publish", records)
	}
	if diff := cmp.Diff([]string{"run-1/train/model", "run-1/train/model.meta.json"}, store.put); diff != "" {
		t.Errorf("keys stored whole before the disk filled (-want +got):\n%s", diff)
	}
	if files := storedFiles(t, root); len(files) != 0 {
		t.Errorf("store holds %v after the failed publish, want nothing", files)
	}
	if _, err := recordstore.ReadOutputs(ctx, local, "run-1", "train"); !errors.Is(err, artifacts.ErrNotFound) {
		t.Errorf("outputs record after the failed publish: %v, want none", err)
	}
}

// A directory output that fails half-way on the local store leaves none
// of its files behind, and no metadata.
func TestPublishDirectoryFailingHalfWay(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	local, err := artifacts.NewLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	const files, size = 8, 1000
	for i := range files {
		if err := os.WriteFile(filepath.Join(src, string(rune('a'+i))), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Room for 7.5 files: the first four (uploaded 4 at a time) are
	// stored whole before the disk fills in the middle of a later one.
	store := &fullStore{Store: local, left: files*size - size/2}
	_, err = artifacts.Publish(ctx, store, "run-1/prep/data", src, artifacts.Metadata{Type: components.TypeDataset})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Publish of a directory on a full disk: %v, want ENOSPC", err)
	}
	if len(store.put) < 4 {
		t.Errorf("only %v stored whole before the failure: the test does not exercise the undo", store.put)
	}
	if got := storedFiles(t, root); len(got) != 0 {
		t.Errorf("store holds %v after the failed publish, want nothing", got)
	}
	if _, err := artifacts.ReadMetadata(ctx, local, "run-1/prep/data"); !errors.Is(err, artifacts.ErrNotFound) {
		t.Errorf("metadata after the failed publish: %v, want none", err)
	}
}
