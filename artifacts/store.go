package artifacts

import (
	"context"
	"errors"
	"io"
	"time"
)

// ErrNotFound is returned (wrapped) when an object does not exist.
var ErrNotFound = errors.New("not found")

// ErrNotRegular is returned (wrapped, see NotRegularError) when a local
// store's object is a symbolic link, a named pipe or another special file.
var ErrNotRegular = errors.New("not a regular file")

// Store is a flat object store addressed by slash-separated keys below a root.
// Implementations are safe for concurrent use.
type Store interface {
	// Root returns the store's root URI, e.g. file:///home/me/.pipectl or s3://bucket/prefix.
	Root() string
	// URI returns the URI of key, e.g. s3://bucket/prefix/run/step/model.
	URI(key string) string
	// Put writes the object key from r, streaming. size is the number of bytes
	// r yields, or -1 when unknown. The object appears whole or not at all.
	Put(ctx context.Context, key string, r io.Reader, size int64) error
	// Create is Put for a new object: when key exists it fails with an
	// error for which errors.Is(err, fs.ErrExist) holds and leaves the
	// object alone, also against a concurrent Create of the same key. The
	// object must fit in one request (an S3 part: 16 MiB by default).
	Create(ctx context.Context, key string, r io.Reader, size int64) error
	// Get opens the object key for reading. A missing object gives an error
	// for which errors.Is(err, ErrNotFound) holds.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// Stat describes the object key, or fails with ErrNotFound.
	Stat(ctx context.Context, key string) (ObjectInfo, error)
	// List returns the entries whose keys start with prefix, sorted by key.
	// Recursive lists every object below prefix; otherwise List returns the
	// objects directly under prefix and, for deeper keys, one entry per
	// common prefix with Dir set and a key ending in "/".
	List(ctx context.Context, prefix string, recursive bool) ([]ObjectInfo, error)
	// Delete removes the object key. A missing object is not an error.
	Delete(ctx context.Context, key string) error
}

// ObjectInfo describes one object (or, with Dir, one common prefix) of a Store.
type ObjectInfo struct {
	// Key is the object's key relative to the store root.
	Key string
	// Size is the object's size in bytes.
	Size int64
	// Modified is when the object was last written.
	Modified time.Time
	// Dir marks a common prefix returned by a non-recursive List.
	Dir bool
}
