package artifacts

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"pipectl.dev/pipectl/components/wire"
)

// supportsDirectIO reports whether dir is on ext4 or XFS, which take
// O_DIRECT writes.
func supportsDirectIO(dir string) bool {
	if runtime.GOOS != "linux" {
		return false
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return false
	}
	return st.Type == 0xEF53 || st.Type == 0x58465342 // EXT4_SUPER_MAGIC, XFS_SUPER_MAGIC
}

// TestDirectWriter writes aligned blocks, then an unaligned buffer, then a
// short tail through a directWriter and reads back exactly what was
// written, on the test's temporary directory and on tmpfs when there is one.
func TestDirectWriter(t *testing.T) {
	dirs := []string{t.TempDir()}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		shm, err := os.MkdirTemp("/dev/shm", "pipectl-direct-test-")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(shm) })
			dirs = append(dirs, shm)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	block := func(n int) []byte {
		b := alignedBuffer(n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	for _, dir := range dirs {
		f, err := os.Create(filepath.Join(dir, "out"))
		if err != nil {
			t.Fatal(err)
		}
		w := newDirectWriter(f)
		if supportsDirectIO(dir) && !w.direct {
			t.Errorf("%s: direct I/O is off on a file system that has it", dir)
		}
		var want bytes.Buffer
		write := func(p []byte) {
			t.Helper()
			if n, err := w.Write(p); err != nil || n != len(p) {
				t.Fatalf("%s: Write(%d bytes) = %d, %v", dir, len(p), n, err)
			}
			want.Write(p)
		}
		write(block(copyBufSize))
		write(block(2 * directAlign))
		wasDirect := w.direct
		unaligned := block(directAlign + 1)[1:] // aligned length, misaligned address
		write(unaligned)
		if w.direct {
			t.Errorf("%s: still direct after a misaligned buffer", dir)
		}
		write(block(123)) // the short tail
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s: read back %d bytes that differ from the %d written (direct I/O before the fallback: %v)", dir, len(got), want.Len(), wasDirect)
		}
	}
}

func TestAlignedBuffer(t *testing.T) {
	for _, n := range []int{1, directAlign, copyBufSize} {
		b := alignedBuffer(n)
		if len(b) != n || cap(b) != n || addr(b)%directAlign != 0 {
			t.Errorf("alignedBuffer(%d): len %d cap %d address %% %d = %d", n, len(b), cap(b), directAlign, addr(b)%directAlign)
		}
	}
}

func TestUseDirectIO(t *testing.T) {
	for _, tc := range []struct {
		env     string
		size    int64
		want    bool
		wantErr bool
	}{
		{"", directMinSize - 1, false, false},
		{"", directMinSize, true, false},
		{"false", 1 << 30, false, false},
		{"0", 1 << 30, false, false},
		{"true", 1 << 30, true, false},
		{"nope", 1 << 30, false, true},
		{"nope", 10, false, false}, // small files never look at it
	} {
		t.Setenv(wire.EnvDirectIO, tc.env)
		got, err := useDirectIO(tc.size)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%s=%q, size %d: useDirectIO = %v, %v; want %v, error %v", wire.EnvDirectIO, tc.env, tc.size, got, err, tc.want, tc.wantErr)
		}
	}
}
