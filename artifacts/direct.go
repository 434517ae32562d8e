package artifacts

import (
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"pipectl.dev/pipectl/components/wire"
)

// Large downloads are written with direct I/O where the file system allows
// it (O_DIRECT on Linux): the bytes go from pipectl's buffers to the disk
// without passing through the page cache. A fetch of many GiB then neither
// waits on the kernel's dirty-page throttling nor fills the node's cache,
// whose pages a Kubernetes pod is charged for, and it needs no fresh page
// per 4 KiB written, which is what makes buffered writes of new files slow
// in virtual machines that hand free memory back to their host. The
// program that reads the file later reads it from the disk.
const (
	// directMinSize is the smallest file written with direct I/O.
	directMinSize = 8 << 20
	// directAlign is the alignment direct I/O asks of buffers, offsets and
	// lengths: the largest logical block size in common use.
	directAlign = 4096
)

// useDirectIO reports whether a download of size bytes should bypass the
// page cache.
func useDirectIO(size int64) (bool, error) {
	if size < directMinSize {
		return false, nil
	}
	if v := os.Getenv(wire.EnvDirectIO); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("%s=%q: want true or false", wire.EnvDirectIO, v)
		}
		return on, nil
	}
	return true, nil
}

// alignedBuffer returns a buffer of n bytes whose first byte is aligned for
// direct I/O.
func alignedBuffer(n int) []byte {
	b := make([]byte, n+directAlign)
	off := directAlign - int(addr(b)%directAlign)
	if off == directAlign {
		off = 0
	}
	return b[off : off+n : off+n]
}

// directWriter writes to a file opened for direct I/O as long as every
// write is aligned, and falls back to buffered writes for the rest of the
// file at the first one that is not (the short last block of a download) or
// that the file system refuses.
type directWriter struct {
	f      *os.File
	direct bool
}

// newDirectWriter switches f to direct I/O when the file system supports
// it; the writer writes through the page cache otherwise.
func newDirectWriter(f *os.File) *directWriter {
	return &directWriter{f: f, direct: setDirect(f, true) == nil}
}

func (w *directWriter) Write(p []byte) (int, error) {
	if w.direct && (len(p)%directAlign != 0 || addr(p)%directAlign != 0) {
		w.buffered()
	}
	n, err := w.f.Write(p)
	if err != nil && w.direct && n == 0 && isInvalid(err) {
		// Some file systems accept O_DIRECT and refuse the write.
		w.buffered()
		return w.f.Write(p)
	}
	return n, err
}

func (w *directWriter) buffered() {
	w.direct = false
	_ = setDirect(w.f, false)
}

// addr is the address of b's first byte (0 for an empty slice).
func addr(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&b[0]))
}
