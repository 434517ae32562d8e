package artifacts

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeTree creates files (path → content) below dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		f := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readTree returns every regular file below dir (path → content) and fails
// on anything else but directories.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		got[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestFetchNeverLosesData fetches a file and a directory output onto
// destinations that exist in every way a user's may, with and without
// Force: nothing that is not the output's is ever replaced or removed.
func TestFetchNeverLosesData(t *testing.T) {
	ctx := t.Context()
	s, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	writeTree(t, src, map[string]string{"file": "new file", "dir/a": "new a", "dir/sub/b": "new b"})
	if _, err := Publish(ctx, s, "r/s/file", filepath.Join(src, "file"), Metadata{Type: "Model"}); err != nil {
		t.Fatal(err)
	}
	if _, err := Publish(ctx, s, "r/s/dir", filepath.Join(src, "dir"), Metadata{Type: "Dataset"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		key      string
		existing map[string]string // below the test's directory
		dest     string            // relative to it
		force    bool
		wantErr  string
		want     map[string]string // the whole directory afterwards
	}{
		{name: "file to a new path", key: "r/s/file", dest: "got",
			want: map[string]string{"got": "new file"}},
		{name: "file onto a file", key: "r/s/file", existing: map[string]string{"got": "mine"}, dest: "got",
			wantErr: "got exists", want: map[string]string{"got": "mine"}},
		{name: "file onto a file, forced", key: "r/s/file", existing: map[string]string{"got": "mine", "other": "keep"}, dest: "got", force: true,
			want: map[string]string{"got": "new file", "other": "keep"}},
		{name: "file onto a directory, forced", key: "r/s/file", existing: map[string]string{"got/x": "mine"}, dest: "got", force: true,
			wantErr: "is a directory: a file output cannot replace it", want: map[string]string{"got/x": "mine"}},
		{name: "directory to a new path", key: "r/s/dir", dest: "got",
			want: map[string]string{"got/a": "new a", "got/sub/b": "new b"}},
		{name: "directory into missing parents", key: "r/s/dir", dest: "p/q/got",
			want: map[string]string{"p/q/got/a": "new a", "p/q/got/sub/b": "new b"}},
		{name: "directory onto a directory", key: "r/s/dir", existing: map[string]string{"got/a": "mine", "got/c": "keep"}, dest: "got",
			wantErr: "got exists", want: map[string]string{"got/a": "mine", "got/c": "keep"}},
		{name: "directory onto a directory, forced", key: "r/s/dir", existing: map[string]string{"got/a": "mine", "got/c": "keep", "got/sub/d": "keep d"}, dest: "got", force: true,
			want: map[string]string{"got/a": "new a", "got/c": "keep", "got/sub/b": "new b", "got/sub/d": "keep d"}},
		{name: "directory onto a file, forced", key: "r/s/dir", existing: map[string]string{"got": "mine"}, dest: "got", force: true,
			wantErr: "is a regular file: a directory output cannot replace it", want: map[string]string{"got": "mine"}},
		{name: "directory onto a directory with a file in the way, forced", key: "r/s/dir", existing: map[string]string{"got/sub": "mine"}, dest: "got", force: true,
			wantErr: "is a regular file: the output's file sub/b cannot be written there", want: map[string]string{"got/sub": "mine"}},
		{name: "directory onto a directory with a directory in the way, forced", key: "r/s/dir", existing: map[string]string{"got/a/x": "mine"}, dest: "got", force: true,
			wantErr: "is a directory: the output's file a cannot be written there", want: map[string]string{"got/a/x": "mine"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tc.existing)
			_, err := Fetch(ctx, s, tc.key, filepath.Join(dir, filepath.FromSlash(tc.dest)), FetchOptions{Force: tc.force})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Fetch: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Fetch = %v, want an error containing %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, readTree(t, dir)); diff != "" {
				t.Errorf("files after Fetch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFetchExistsError: a destination that exists is reported as such, so
// the CLI can say what to do.
func TestFetchExistsError(t *testing.T) {
	s, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "f")
	writeTree(t, filepath.Dir(src), map[string]string{"f": "x"})
	if _, err := Publish(t.Context(), s, "r/s/f", src, Metadata{Type: "Model"}); err != nil {
		t.Fatal(err)
	}
	_, err = Fetch(t.Context(), s, "r/s/f", src, FetchOptions{})
	var ee *ExistsError
	if !errors.As(err, &ee) || ee.Path != src || !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Fetch onto an existing file = %v, want an *ExistsError for %s", err, src)
	}
}

// TestFetchModes: fetched files and directories get the modes cp and mkdir
// give new ones (0644 and 0755 less the umask), not private ones.
func TestFetchModes(t *testing.T) {
	ctx := t.Context()
	s, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	writeTree(t, src, map[string]string{"dir/sub/a": "a"})
	if _, err := Publish(ctx, s, "r/s/dir", filepath.Join(src, "dir"), Metadata{Type: "Dataset"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// What mkdir and an ordinary create give under this process's umask.
	if err := os.Mkdir(filepath.Join(dir, "ref"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ref", "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dirMode, fileMode := modeOf(t, filepath.Join(dir, "ref")), modeOf(t, filepath.Join(dir, "ref", "f"))
	got := filepath.Join(dir, "got")
	if _, err := Fetch(ctx, s, "r/s/dir", got, FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want fs.FileMode
	}{{got, dirMode}, {filepath.Join(got, "sub"), dirMode}, {filepath.Join(got, "sub", "a"), fileMode}} {
		if m := modeOf(t, c.path); m != c.want {
			t.Errorf("mode of %s = %v, want %v", c.path, m, c.want)
		}
	}
}

func modeOf(t *testing.T, p string) fs.FileMode {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// TestLongFileNames: a directory output may hold a file whose name is near
// the file system's limit of 255 bytes; temporary names do not grow it.
func TestLongFileNames(t *testing.T) {
	ctx := t.Context()
	s, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("n", 250)
	src := t.TempDir()
	writeTree(t, src, map[string]string{"dir/" + long: "long", long: "file"})
	if _, err := Publish(ctx, s, "r/s/dir", filepath.Join(src, "dir"), Metadata{Type: "Dataset"}); err != nil {
		t.Fatalf("publish: %v", err)
	}
	dest := filepath.Join(t.TempDir(), long)
	if _, err := Fetch(ctx, s, "r/s/dir", dest, FetchOptions{}); err != nil {
		t.Fatalf("fetch a directory: %v", err)
	}
	if diff := cmp.Diff(map[string]string{long: "long"}, readTree(t, dest)); diff != "" {
		t.Errorf("fetched (-want +got):\n%s", diff)
	}
	if err := CopyToFile(ctx, s, "r/s/dir/"+long, filepath.Join(t.TempDir(), long), 4, "", FetchOptions{}); err != nil {
		t.Fatalf("fetch one file: %v", err)
	}
}

// TestFetchCancelledLeavesNothing: a download stopped by its context (Ctrl-C)
// leaves no temporary file or directory beside its destination.
func TestFetchCancelledLeavesNothing(t *testing.T) {
	s, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	files := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		files["dir/"+n] = strings.Repeat(n, 1<<20)
	}
	writeTree(t, src, files)
	if _, err := Publish(t.Context(), s, "r/s/dir", filepath.Join(src, "dir"), Metadata{Type: "Dataset"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	dir := t.TempDir()
	if _, err := Fetch(ctx, s, "r/s/dir", filepath.Join(dir, "got"), FetchOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Fetch with a cancelled context = %v, want context.Canceled", err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if len(names) != 0 {
		t.Errorf("a cancelled Fetch left %v", names)
	}
}
