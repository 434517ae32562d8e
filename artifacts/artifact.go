package artifacts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"pipectl.dev/pipectl/components/regular"
)

// Kinds of output stored under one key.
const (
	KindFile      = "file"
	KindDirectory = "directory"
)

// Metadata describes one stored output. It is written after the output's
// data, so an output without metadata is incomplete and never read.
type Metadata struct {
	// Type is the output's declared type: Dataset, Model, Metrics, Artifact.
	Type string `json:"type"`
	// Kind is "file" or "directory".
	Kind string `json:"kind"`
	// Size is the total number of bytes.
	Size int64 `json:"size"`
	// SHA256 is the hex sha256 of a file's bytes; for a directory, of its
	// manifest: one "<sha256>  <path>\n" line per file, sorted by path (the
	// format of sha256sum).
	SHA256 string `json:"sha256"`
	// Producer names the run and step that wrote the output.
	Producer Producer `json:"producer"`
	// Created is when the output was published.
	Created time.Time `json:"created"`
	// Files lists a directory output's files.
	Files []FileEntry `json:"files,omitempty"`
	// Source, for an imported artifact (ImportKey), is the URI it was
	// imported from.
	Source string `json:"source,omitempty"`
}

// Producer names the step that produced an output.
type Producer struct {
	Run    string `json:"run"`
	Step   string `json:"step"`
	Output string `json:"output"`
}

// FileEntry is one file of a directory output.
type FileEntry struct {
	// Path is slash-separated, relative to the output.
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// MetadataKey is the key of the metadata of the output stored at key.
func MetadataKey(key string) string { return strings.TrimSuffix(key, "/") + ".meta.json" }

// transferConcurrency bounds the files of one directory moved at once.
const transferConcurrency = 4

// Publish uploads the file or directory at local to key and then writes its
// metadata, which it returns. meta supplies Type and Producer. The upload
// reports to the Progress of ctx (see WithProgress). When it fails, it
// deletes (best effort) what it already stored for key: no file of a
// half-published directory stays behind.
func Publish(ctx context.Context, s Store, key, local string, meta Metadata) (_ Metadata, err error) {
	var stored []string // keys this call wrote, deleted again when it fails
	var mu sync.Mutex
	defer func() {
		if err != nil && len(stored) > 0 {
			err = errors.Join(err, DeleteKeys(ctx, s, stored...))
		}
	}()
	st, err := os.Stat(local)
	if err != nil {
		return Metadata{}, err
	}
	if !st.IsDir() && !st.Mode().IsRegular() {
		return Metadata{}, fmt.Errorf("%s is %s: only regular files and directories can be stored", local, regular.Describe(st.Mode()))
	}
	meta.Created = time.Now().UTC()
	if !st.IsDir() {
		meta.Kind = KindFile
		tr := startProgress(ctx, "upload "+s.URI(key), st.Size())
		defer func() { tr.Done(err) }()
		meta.Size, meta.SHA256, err = putFile(ctx, s, key, local, tr)
		if err != nil {
			return Metadata{}, err
		}
		stored = append(stored, key)
	} else {
		meta.Kind = KindDirectory
		var files []string
		var total int64
		err = filepath.WalkDir(local, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() {
				files = append(files, p)
				if info, err := d.Info(); err == nil {
					total += info.Size()
				}
			} else if !d.IsDir() {
				return fmt.Errorf("%s is %s: only regular files and directories can be stored", p, regular.Describe(d.Type()))
			}
			return nil
		})
		if err != nil {
			return Metadata{}, err
		}
		tr := startProgress(ctx, "upload "+s.URI(key), total)
		defer func() { tr.Done(err) }()
		entries := make([]FileEntry, len(files))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(transferConcurrency)
		for i, f := range files {
			rel, _ := filepath.Rel(local, f)
			rel = filepath.ToSlash(rel)
			g.Go(func() error {
				size, sum, err := putFile(gctx, s, key+"/"+rel, f, tr)
				if err != nil {
					return err
				}
				mu.Lock()
				stored = append(stored, key+"/"+rel)
				mu.Unlock()
				entries[i] = FileEntry{Path: rel, Size: size, SHA256: sum}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return Metadata{}, err
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
		meta.Files = entries
		meta.Size = 0
		for _, e := range entries {
			meta.Size += e.Size
		}
		meta.SHA256 = ManifestSum(entries)
	}
	if err := WriteMetadata(ctx, s, key, meta); err != nil {
		return Metadata{}, err
	}
	return meta, nil
}

// Unpublish deletes, best effort, the output Publish stored at key and
// described by meta: its metadata first (so no reader believes it any
// more), then its objects. It returns the deletions that failed, joined.
func Unpublish(ctx context.Context, s Store, key string, meta Metadata) error {
	keys := []string{MetadataKey(key)}
	if meta.Kind == KindDirectory {
		for _, f := range meta.Files {
			keys = append(keys, key+"/"+f.Path)
		}
	} else {
		keys = append(keys, key)
	}
	return DeleteKeys(ctx, s, keys...)
}

// cleanupTimeout bounds the deletions that undo a failed publish.
const cleanupTimeout = time.Minute

// DeleteKeys deletes every key, best effort, also when ctx has ended (a
// cancelled publish is undone too, within cleanupTimeout), and joins the
// failures.
func DeleteKeys(ctx context.Context, s Store, keys ...string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	var errs []error
	for _, k := range keys {
		if err := s.Delete(ctx, k); err != nil {
			errs = append(errs, fmt.Errorf("remove %s of the failed publish: %w", s.URI(k), err))
		}
	}
	return errors.Join(errs...)
}

// ManifestSum is the sha256 of a directory output of entries (sorted by
// path): the sha256 of its lines "SHA256  PATH", one a file.
func ManifestSum(entries []FileEntry) string {
	h := sha256.New()
	for _, e := range entries {
		fmt.Fprintf(h, "%s  %s\n", e.SHA256, e.Path)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func putFile(ctx context.Context, s Store, key, local string, tr Tracker) (int64, string, error) {
	f, st, err := regular.Open(local)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	if p, ok := s.(readerAtPutter); ok {
		// The store reads parts of the file in parallel; hash it meanwhile.
		g, gctx := errgroup.WithContext(ctx)
		g.Go(func() error {
			_, err := io.Copy(h, ctxReader{gctx, io.NewSectionReader(f, 0, st.Size())})
			return err
		})
		g.Go(func() error { return p.putReaderAt(gctx, key, f, st.Size(), tr) })
		if err := g.Wait(); err != nil {
			return 0, "", err
		}
		if now, err := f.Stat(); err != nil || now.Size() != st.Size() || !now.ModTime().Equal(st.ModTime()) {
			return 0, "", fmt.Errorf("%s changed while it was uploaded to %s", local, s.URI(key))
		}
	} else if err := s.Put(ctx, key, countingReader{io.TeeReader(f, h), tr}, st.Size()); err != nil {
		return 0, "", err
	}
	return st.Size(), hex.EncodeToString(h.Sum(nil)), nil
}

// readerAtPutter is implemented by stores that upload a file by reading
// parts of it in parallel, buffering nothing (S3). tr counts the bytes sent.
type readerAtPutter interface {
	putReaderAt(ctx context.Context, key string, r io.ReaderAt, size int64, tr Tracker) error
}

// WriteMetadata stores meta as the metadata of the output at key.
func WriteMetadata(ctx context.Context, s Store, key string, meta Metadata) error {
	return PutJSON(ctx, s, MetadataKey(key), meta)
}

// ReadMetadata reads the metadata of the output stored at key. An output
// without metadata is incomplete and gives ErrNotFound.
func ReadMetadata(ctx context.Context, s Store, key string) (Metadata, error) {
	var m Metadata
	err := GetJSON(ctx, s, MetadataKey(key), &m)
	if errors.Is(err, ErrNotFound) {
		return m, fmt.Errorf("no complete output at %s: %w", s.URI(key), ErrNotFound)
	}
	return m, err
}

// FetchOptions say what Fetch does with a destination that exists.
type FetchOptions struct {
	// Force replaces the files that exist where the output's files go
	// (for a directory output: inside the existing directory). Nothing else
	// is touched: other files in that directory stay. Without Force, a
	// destination that exists is an *ExistsError and nothing is written.
	Force bool
}

// Fetch downloads the output stored at key to dest (a file or a directory,
// as it was published), verifying every byte against the recorded sha256.
// Data is written to a temporary file or directory beside dest, removed on
// any error or cancellation, and renamed into place once verified: dest
// appears whole or not at all. It never replaces anything that exists
// unless opts.Force says so (see FetchOptions).
func Fetch(ctx context.Context, s Store, key, dest string, opts FetchOptions) (_ Metadata, err error) {
	meta, err := ReadMetadata(ctx, s, key)
	if err != nil {
		return meta, err
	}
	if meta.Kind == KindDirectory && ManifestSum(meta.Files) != meta.SHA256 {
		return meta, fmt.Errorf("%s: metadata file list does not match its sha256", s.URI(key))
	}
	for _, e := range meta.Files {
		p := path.Clean("/" + e.Path)[1:]
		if p != e.Path || p == "" {
			return meta, fmt.Errorf("%s: metadata names an unsafe path %q", s.URI(key), e.Path)
		}
	}
	st, err := os.Lstat(dest)
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return meta, err
	case exists && !opts.Force:
		return meta, &ExistsError{Path: dest}
	case exists && meta.Kind == KindDirectory && !st.IsDir():
		return meta, fmt.Errorf("%s is %s: a directory output cannot replace it", dest, regular.Describe(st.Mode()))
	case exists && meta.Kind != KindDirectory && !st.Mode().IsRegular():
		return meta, fmt.Errorf("%s is %s: a file output cannot replace it", dest, regular.Describe(st.Mode()))
	}
	tr := startProgress(ctx, "download "+s.URI(key), meta.Size)
	defer func() { tr.Done(err) }()
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return meta, err
	}
	if meta.Kind != KindDirectory {
		return meta, fetchFile(ctx, s, key, dest, meta.Size, meta.SHA256, tr, opts.Force)
	}
	tmp, err := mkdirTemp(filepath.Dir(dest))
	if err != nil {
		return meta, err
	}
	defer os.RemoveAll(tmp)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(transferConcurrency)
	for _, e := range meta.Files {
		g.Go(func() error {
			return fetchFile(gctx, s, key+"/"+e.Path, filepath.Join(tmp, filepath.FromSlash(e.Path)), e.Size, e.SHA256, tr, false)
		})
	}
	if err := g.Wait(); err != nil {
		return meta, err
	}
	if exists {
		return meta, mergeInto(tmp, dest, meta.Files)
	}
	return meta, renameNoReplace(tmp, dest)
}

// mergeInto moves the files of a fetched directory output from tmp into the
// existing directory dest, each replacing the file of the same path. It
// checks every path first, so that a file in the way of a directory (or a
// directory in the way of a file) stops it before anything is moved.
func mergeInto(tmp, dest string, files []FileEntry) error {
	for _, e := range files {
		parts := strings.Split(e.Path, "/")
		p := dest
		for i, part := range parts {
			p = filepath.Join(p, part)
			st, err := os.Lstat(p)
			if errors.Is(err, fs.ErrNotExist) {
				break
			}
			if err != nil {
				return err
			}
			last := i == len(parts)-1
			if last && !st.Mode().IsRegular() || !last && !st.IsDir() {
				return fmt.Errorf("%s is %s: the output's file %s cannot be written there", p, regular.Describe(st.Mode()), e.Path)
			}
		}
	}
	for _, e := range files {
		to := filepath.Join(dest, filepath.FromSlash(e.Path))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(tmp, filepath.FromSlash(e.Path)), to); err != nil {
			return err
		}
	}
	return nil
}

// fetchFile downloads the object key of size bytes to dest, through a
// temporary file renamed into place once its sha256 matches want. An
// existing dest is replaced only when replace is set.
func fetchFile(ctx context.Context, s Store, key, dest string, size int64, want string, tr Tracker, replace bool) error {
	direct, err := useDirectIO(size)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	tmp, err := createTemp(filepath.Dir(dest))
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	var w io.Writer = tmp
	if direct {
		w = newDirectWriter(tmp)
	}
	err = Copy(ctx, s, key, countingWriter{w, tr}, want)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if replace {
		return os.Rename(tmp.Name(), dest)
	}
	return renameNoReplace(tmp.Name(), dest)
}

// ChecksumError reports data whose sha256 differs from its metadata.
type ChecksumError struct {
	URI       string
	Want, Got string
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("%s is corrupt: sha256 %s, metadata says %s", e.URI, e.Got, e.Want)
}

// Copy streams the object key to w and checks its sha256 against want (when
// want is not empty). On a mismatch the bytes were written but Copy returns a
// *ChecksumError.
func Copy(ctx context.Context, s Store, key string, w io.Writer, want string) error {
	r, err := s.Get(ctx, key)
	if err != nil {
		return err
	}
	defer r.Close()
	got, err := copyHashed(ctx, w, r)
	if err != nil {
		return fmt.Errorf("read %s: %w", s.URI(key), err)
	}
	if want != "" && got != want {
		return &ChecksumError{URI: s.URI(key), Want: want, Got: got}
	}
	return nil
}

// copyBufs are the buffers of copyHashed. They are aligned for direct I/O
// (see directWriter).
var copyBufs = sync.Pool{New: func() any { b := alignedBuffer(copyBufSize); return &b }}

const (
	copyBufSize = 1 << 20
	copyDepth   = 8 // most buffers in flight per copy
)

// copyHashed copies r to w and returns the hex sha256 of the bytes.
// Receiving, writing and hashing run in three goroutines, a pipeline of up
// to copyDepth buffers, so that they overlap. Buffers are taken as the
// pipeline needs them: a small object uses one.
func copyHashed(ctx context.Context, w io.Writer, r io.Reader) (string, error) {
	free := make(chan *[]byte, copyDepth)
	made := 0 // buffers taken from copyBufs; only the reader takes them
	// No send blocks: at most copyDepth buffers exist.
	toWrite := make(chan *[]byte, copyDepth)
	toHash := make(chan *[]byte, copyDepth)
	stop := make(chan struct{})
	var rerr error
	go func() {
		defer close(toWrite)
		for {
			var b *[]byte
			select {
			case b = <-free:
			default:
				if made < copyDepth {
					b = copyBufs.Get().(*[]byte)
					made++
					break
				}
				select {
				case b = <-free:
				case <-stop:
					return
				}
			}
			n, err := io.ReadFull(r, *b)
			if n == 0 {
				free <- b
			} else {
				*b = (*b)[:n]
				toWrite <- b
			}
			if err == nil {
				err = ctx.Err()
			}
			if err != nil {
				if err != io.EOF && err != io.ErrUnexpectedEOF {
					rerr = err
				}
				return
			}
		}
	}()
	h := sha256.New()
	hashed := make(chan struct{})
	go func() {
		defer close(hashed)
		for b := range toHash {
			h.Write(*b)
			*b = (*b)[:cap(*b)]
			free <- b
		}
	}()
	var werr error
	for b := range toWrite {
		if werr == nil {
			if _, werr = w.Write(*b); werr != nil {
				close(stop)
			}
		}
		toHash <- b
	}
	close(toHash)
	<-hashed
	// The reader has returned (toWrite is closed): made is final, and
	// every buffer is back in free.
	for range made {
		copyBufs.Put(<-free)
	}
	if werr != nil {
		return "", werr
	}
	if rerr != nil {
		return "", rerr
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// PutJSON stores v as JSON at key, indented to jsonIndentDepth levels
// (see IndentShallow).
func PutJSON(ctx context.Context, s Store, key string, v any) error {
	b, err := MarshalShallow(v)
	if err != nil {
		return err
	}
	return s.Put(ctx, key, bytes.NewReader(b), int64(len(b)))
}

// MaxJSONObject bounds a JSON object of the store that GetJSON reads (a
// run record, a journal entry, metadata): a larger one is corrupt.
const MaxJSONObject = 128 << 20

// jsonIndentDepth is how many levels of a stored JSON object are indented:
// a run record's steps and their outputs; deeper values (a loop item) stay
// compact, so a record grows with its data, not with its depth squared.
const jsonIndentDepth = 6

// MarshalShallow is json.Marshal, indented by two spaces to
// jsonIndentDepth levels, with a final newline.
func MarshalShallow(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(IndentShallow(b, jsonIndentDepth), '\n'), nil
}

// IndentShallow indents the compact JSON b as json.Indent does with two
// spaces, but only to depth levels: values nested deeper stay on one line.
// Its cost is linear in len(b) whatever the nesting (json.MarshalIndent's
// is quadratic in it: a 9,000-deep loop item made a 162 MB record).
func IndentShallow(b []byte, depth int) []byte {
	out := make([]byte, 0, len(b)+len(b)/4)
	newline := func(d int) {
		out = append(out, '\n')
		for range d {
			out = append(out, ' ', ' ')
		}
	}
	d, inString, escaped := 0, false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			out = append(out, c)
		case '{', '[':
			out = append(out, c)
			d++
			if d <= depth && i+1 < len(b) && b[i+1] != '}' && b[i+1] != ']' {
				newline(d)
			}
		case '}', ']':
			if d <= depth && i > 0 && b[i-1] != '{' && b[i-1] != '[' {
				newline(d - 1)
			}
			d--
			out = append(out, c)
		case ',':
			out = append(out, c)
			if d <= depth {
				newline(d)
			}
		case ':':
			out = append(out, c)
			if d <= depth {
				out = append(out, ' ')
			}
		default:
			out = append(out, c)
		}
	}
	return out
}

// GetJSON reads the JSON object at key into v. An object larger than
// MaxJSONObject is a CorruptError, never read whole.
func GetJSON(ctx context.Context, s Store, key string, v any) error {
	r, err := s.Get(ctx, key)
	if err != nil {
		return err
	}
	defer r.Close()
	rr := &readErrs{r: r}
	lr := &io.LimitedReader{R: rr, N: MaxJSONObject + 1}
	dec := json.NewDecoder(lr)
	err = dec.Decode(v)
	if err == nil {
		// Only white space may follow the value: a record followed by
		// zeros is refused at the first of them, not read to its end.
		err = trailing(io.MultiReader(dec.Buffered(), lr))
	}
	if lr.N <= 0 {
		return &CorruptError{URI: s.URI(key), Err: fmt.Errorf("larger than the %d MiB a record may hold", MaxJSONObject>>20)}
	}
	if err != nil {
		if rr.err != nil {
			// The store failed the read: the object may be sound.
			return fmt.Errorf("%s: %w", s.URI(key), err)
		}
		// Everything else is the object's own fault: bad JSON, a
		// truncation, a value its type refuses (a time such as
		// "0001-01-01T00:00n00Z").
		return &CorruptError{URI: s.URI(key), Err: err}
	}
	return nil
}

// readErrs is a reader that keeps the first error, other than io.EOF, of
// the reader it wraps.
type readErrs struct {
	r   io.Reader
	err error
}

func (e *readErrs) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// errTrailing is trailing's error.
var errTrailing = errors.New("data after the JSON value")

// trailing fails unless r holds only JSON white space.
func trailing(r io.Reader) error {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		for _, c := range buf[:n] {
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				return errTrailing
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// CorruptError reports a JSON object of the store (a run record, metadata)
// that is not valid JSON of its kind: truncated by a crash, or edited.
type CorruptError struct {
	URI string
	Err error
}

func (e *CorruptError) Error() string {
	msg := e.Err.Error()
	if errors.Is(e.Err, io.EOF) || errors.Is(e.Err, io.ErrUnexpectedEOF) {
		msg = "truncated JSON"
	}
	return fmt.Sprintf("%s is corrupt: %s", e.URI, msg)
}

func (e *CorruptError) Unwrap() error { return e.Err }
