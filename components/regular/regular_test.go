package regular

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRead: a regular file is read whole up to the limit; a named pipe (with
// no writer, so a blocking open would hang), a directory and a file over the
// limit are errors naming the path and what it is.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "p")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := Read(file, 5); err != nil || string(b) != "12345" {
		t.Errorf("Read(file, 5) = %q, %v", b, err)
	}
	for _, tt := range []struct {
		path  string
		limit int64
		want  string
	}{
		{fifo, 10, fifo + ": a named pipe (FIFO), not a regular file"},
		{dir, 10, dir + ": a directory, not a regular file"},
		{file, 4, file + ": larger than the 4 bytes allowed"},
	} {
		if _, err := Read(tt.path, tt.limit); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Read(%s, %d) = %v, want an error with %q", tt.path, tt.limit, err, tt.want)
		}
	}
}

// TestReadNoFollow: a link (to /dev/zero, to a regular file) is refused
// without being opened; a named pipe never blocks; a regular file is read.
func TestReadNoFollow(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	zero, link, fifo := filepath.Join(dir, "zero"), filepath.Join(dir, "link"), filepath.Join(dir, "p")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadNoFollow(file, 5); err != nil || string(b) != "12345" {
		t.Errorf("ReadNoFollow(file) = %q, %v", b, err)
	}
	for path, want := range map[string]string{
		zero: zero + ": a symbolic link, not a regular file",
		link: link + ": a symbolic link, not a regular file",
		fifo: fifo + ": a named pipe (FIFO), not a regular file",
	} {
		if _, err := ReadNoFollow(path, 1<<20); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadNoFollow(%s) = %v, want %q", path, err, want)
		}
	}
}
