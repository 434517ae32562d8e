package artifacts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
)

// chunkSize is the unit of upload buffers. A part is one or more chunks.
const chunkSize = 1 << 20

// abortTimeout bounds the request that aborts a failed multipart upload.
const abortTimeout = 30 * time.Second

// chunkPool hands out upload buffers. It never holds more than its capacity,
// whatever the number and the size of the uploads, so an S3 store's upload
// memory is bounded by S3Options.MaxMemory.
type chunkPool struct {
	sem  *semaphore.Weighted
	cap  int64 // in chunks
	mu   sync.Mutex
	out  int64    // chunks handed out
	free [][]byte // kept while uploads run, dropped when none does
}

func newChunkPool(maxMemory int64) *chunkPool {
	n := max(maxMemory/chunkSize, 1)
	return &chunkPool{sem: semaphore.NewWeighted(n), cap: n}
}

// get waits for n chunks (n <= p.cap).
func (p *chunkPool) get(ctx context.Context, n int) ([][]byte, error) {
	if n == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := p.sem.Acquire(ctx, int64(n)); err != nil {
		return nil, err
	}
	out := make([][]byte, n)
	p.mu.Lock()
	p.out += int64(n)
	for i := range out {
		if k := len(p.free); k > 0 {
			out[i], p.free = p.free[k-1], p.free[:k-1]
		}
	}
	p.mu.Unlock()
	for i := range out {
		if out[i] == nil {
			out[i] = make([]byte, chunkSize)
		}
	}
	return out, nil
}

// put returns chunks got from get.
func (p *chunkPool) put(chunks [][]byte) {
	if len(chunks) == 0 {
		return
	}
	p.mu.Lock()
	p.out -= int64(len(chunks))
	if p.out == 0 {
		p.free = nil // idle: let the garbage collector have the memory
	} else {
		p.free = append(p.free, chunks...)
	}
	p.mu.Unlock()
	p.sem.Release(int64(len(chunks)))
}

// part is one part of an upload: a seekable body (minio-go retries requests
// whose body it can rewind) and what to do once it is sent.
type part struct {
	num     int
	n       int64
	body    io.ReadSeeker
	release func()
}

func (p *part) done() {
	if p.release != nil {
		p.release()
	}
}

// chunkReader reads the first n bytes of a list of chunks.
type chunkReader struct {
	chunks [][]byte
	n, off int64
}

func (r *chunkReader) Read(b []byte) (int, error) {
	if r.off >= r.n {
		return 0, io.EOF
	}
	c := r.chunks[r.off/chunkSize][r.off%chunkSize:]
	c = c[:min(int64(len(c)), r.n-r.off)]
	k := copy(b, c)
	r.off += int64(k)
	return k, nil
}

// WriteTo lets the HTTP client write whole chunks.
func (r *chunkReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for r.off < r.n {
		c := r.chunks[r.off/chunkSize][r.off%chunkSize:]
		c = c[:min(int64(len(c)), r.n-r.off)]
		k, err := w.Write(c)
		r.off += int64(k)
		total += int64(k)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func (r *chunkReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.n
	default:
		return 0, errors.New("chunkReader.Seek: invalid whence")
	}
	if offset < 0 {
		return 0, errors.New("chunkReader.Seek: negative position")
	}
	r.off = offset
	return offset, nil
}

// partSize returns the size of part num of an upload of size bytes (-1 when
// unknown), a whole number of chunks. Known sizes get parts large enough for
// S3's 10,000 parts; unknown sizes get parts that double every 2,000 parts.
func (s *S3) partSize(size int64, num int) (int64, error) {
	ps := s.cfg.partSize
	if size >= 0 {
		ps = max(ps, (size+maxParts-1)/maxParts)
	} else {
		ps <<= min((num-1)/2000, 20)
	}
	ps = (ps + chunkSize - 1) / chunkSize * chunkSize
	if limit := s.pool.cap * chunkSize; ps > limit {
		if size >= 0 {
			return 0, fmt.Errorf("an object of %d bytes needs parts of %d bytes, more than the upload memory bound of %d bytes (S3Options.MaxMemory)", size, ps, limit)
		}
		ps = limit / chunkSize * chunkSize
	}
	return ps, nil
}

// stream cuts a reader into parts held in pooled chunks.
type stream struct {
	s     *S3
	key   string
	size  int64
	r     io.Reader
	total int64 // bytes read so far
}

// next reads part num. last reports that the reader is exhausted.
func (u *stream) next(ctx context.Context, num int) (*part, bool, error) {
	ps, err := u.s.partSize(u.size, num)
	if err != nil {
		return nil, false, err
	}
	want := ps
	if u.size >= 0 {
		want = min(ps, u.size-u.total)
	}
	chunks, err := u.s.pool.get(ctx, int((want+chunkSize-1)/chunkSize))
	if err != nil {
		return nil, false, err
	}
	var n int64
	last := false
	for _, c := range chunks {
		k, err := io.ReadFull(u.r, c[:min(chunkSize, want-n)])
		n += int64(k)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			last = true
			break
		}
		if err != nil {
			u.s.pool.put(chunks)
			return nil, false, fmt.Errorf("write %s: %w", u.s.URI(u.key), err)
		}
	}
	u.total += n
	if u.size >= 0 && !last && u.total == u.size {
		// The declared size is read: the reader must be at its end.
		var b [1]byte
		k, err := io.ReadFull(u.r, b[:])
		switch {
		case k > 0:
			u.total++
			last = true
		case err == io.EOF:
			last = true
		case err != nil:
			u.s.pool.put(chunks)
			return nil, false, fmt.Errorf("write %s: %w", u.s.URI(u.key), err)
		}
	}
	if last && u.size >= 0 && u.total != u.size {
		u.s.pool.put(chunks)
		if u.total < u.size {
			return nil, false, fmt.Errorf("write %s: got %d bytes, want %d", u.s.URI(u.key), u.total, u.size)
		}
		return nil, false, fmt.Errorf("write %s: got more than the %d bytes declared", u.s.URI(u.key), u.size)
	}
	return &part{num: num, n: n, body: &chunkReader{chunks: chunks, n: n}, release: func() { u.s.pool.put(chunks) }}, last, nil
}

// Put implements Store. An object that fits in one part is sent with one
// request; a larger one as a multipart upload with S3Options.Concurrency
// parts in flight, completed only once every part is stored and aborted
// on any failure, so the object appears whole or not at all. Memory is
// bounded by the store's chunk pool whatever the size, also when size is -1.
func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	name, err := s.object(key)
	if err != nil {
		return err
	}
	u := &stream{s: s, key: key, size: size, r: r}
	return s.upload(ctx, key, name, u.next)
}

// Create implements Store with a conditional request (If-None-Match: *),
// which S3 and MinIO refuse with 412 Precondition Failed when the object
// exists. Should a retried request meet the object its first try wrote,
// Create reports it as existing.
func (s *S3) Create(ctx context.Context, key string, r io.Reader, size int64) error {
	name, err := s.object(key)
	if err != nil {
		return err
	}
	u := &stream{s: s, key: key, size: size, r: r}
	p, last, err := u.next(ctx, 1)
	if err != nil {
		return err
	}
	defer p.done()
	if !last {
		return fmt.Errorf("create %s: the object is larger than one part (%d bytes)", s.URI(key), p.n)
	}
	opts := minio.PutObjectOptions{ContentType: contentType(key), DisableContentSha256: true}
	opts.SetMatchETagExcept("*")
	if _, err := s.core.PutObject(ctx, s.bucket, name, p.body, p.n, "", "", opts); err != nil {
		var resp minio.ErrorResponse
		if errors.As(err, &resp) && (resp.StatusCode == http.StatusPreconditionFailed || resp.Code == "PreconditionFailed") {
			return fmt.Errorf("%s: %w", s.URI(key), fs.ErrExist)
		}
		return s.wrap("write", key, err)
	}
	return nil
}

// putReaderAt uploads size bytes of r to key, reading parts in parallel
// straight from r: nothing is buffered. tr counts the bytes sent.
func (s *S3) putReaderAt(ctx context.Context, key string, r io.ReaderAt, size int64, tr Tracker) error {
	name, err := s.object(key)
	if err != nil {
		return err
	}
	// Nothing is buffered, so parts may be as large as S3 needs.
	ps := max(s.cfg.partSize, (size+maxParts-1)/maxParts)
	ps = (ps + chunkSize - 1) / chunkSize * chunkSize
	next := func(_ context.Context, num int) (*part, bool, error) {
		off := int64(num-1) * ps
		n := min(ps, size-off)
		return &part{num: num, n: n, body: &progressSection{SectionReader: io.NewSectionReader(r, off, n), t: tr}}, off+n >= size, nil
	}
	return s.upload(ctx, key, name, next)
}

// progressSection reports the bytes read from a section once, however
// often a retry rereads them.
type progressSection struct {
	*io.SectionReader
	t    Tracker
	high int64 // bytes reported
}

func (p *progressSection) Read(b []byte) (int, error) {
	n, err := p.SectionReader.Read(b)
	if pos, _ := p.SectionReader.Seek(0, io.SeekCurrent); pos > p.high {
		p.t.Add(pos - p.high)
		p.high = pos
	}
	return n, err
}

// upload sends the parts next yields: one request for an object of one
// part, else a multipart upload.
func (s *S3) upload(ctx context.Context, key, name string, next func(context.Context, int) (*part, bool, error)) error {
	first, last, err := next(ctx, 1)
	if err != nil {
		return err
	}
	opts := minio.PutObjectOptions{ContentType: contentType(key), DisableContentSha256: true}
	if last {
		defer first.done()
		if _, err := s.core.PutObject(ctx, s.bucket, name, first.body, first.n, "", "", opts); err != nil {
			return s.wrap("write", key, err)
		}
		return nil
	}
	return s.multipart(ctx, key, name, opts, first, next)
}

// multipart runs a multipart upload of first and the parts after it. It
// completes the upload only when every part is stored; on any failure it
// aborts it, so no partial object ever appears.
func (s *S3) multipart(ctx context.Context, key, name string, opts minio.PutObjectOptions, first *part, next func(context.Context, int) (*part, bool, error)) (err error) {
	id, err := s.core.NewMultipartUpload(ctx, s.bucket, name, opts)
	if err != nil {
		first.done()
		return s.wrap("write", key, err)
	}
	defer func() {
		if err == nil {
			return
		}
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
		defer cancel()
		if aerr := s.core.AbortMultipartUpload(actx, s.bucket, name, id); aerr != nil {
			err = fmt.Errorf("%w; the incomplete multipart upload could not be aborted either (%v): `mc rm --incomplete` or a lifecycle rule removes it", err, shortURLError(aerr))
		} else {
			err = fmt.Errorf("%w; the incomplete upload was aborted", err)
		}
	}()

	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.cfg.concurrency)
	var mu sync.Mutex
	var done []minio.CompletePart
	var readErr error
	p, last := first, false
	for {
		cur := p
		g.Go(func() error {
			defer cur.done()
			op, err := s.core.PutObjectPart(gctx, s.bucket, name, id, cur.num, cur.body, cur.n,
				minio.PutObjectPartOptions{DisableContentSha256: true})
			if err != nil {
				return fmt.Errorf("part %d: %w", cur.num, shortURLError(err))
			}
			mu.Lock()
			done = append(done, minio.CompletePart{PartNumber: cur.num, ETag: op.ETag})
			mu.Unlock()
			return nil
		})
		if last {
			break
		}
		if p.num == maxParts {
			readErr = fmt.Errorf("write %s: more than %d parts", s.URI(key), maxParts)
			break
		}
		if gctx.Err() != nil {
			break
		}
		np, nlast, err := next(gctx, p.num+1)
		if err != nil {
			readErr = err
			break
		}
		if np.n == 0 {
			// The previous part ended exactly at the end of the reader.
			np.done()
			break
		}
		p, last = np, nlast
	}
	if werr := g.Wait(); werr != nil {
		return s.wrap("write", key, werr)
	}
	if readErr != nil {
		return readErr
	}
	sort.Slice(done, func(i, j int) bool { return done[i].PartNumber < done[j].PartNumber })
	if _, err := s.core.CompleteMultipartUpload(ctx, s.bucket, name, id, done, minio.PutObjectOptions{}); err != nil {
		return s.wrap("write", key, err)
	}
	return nil
}
