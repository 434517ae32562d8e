package artifacts

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/minio/minio-go/v7"
)

// GetRange opens the bytes of the object key from offset on: length bytes,
// or to the end when length is negative. Local and S3 stores read only those
// bytes (a seek, an HTTP range request); other stores skip up to offset.
func GetRange(ctx context.Context, s Store, key string, offset, length int64) (io.ReadCloser, error) {
	if offset < 0 {
		return nil, fmt.Errorf("read %s: negative offset %d", s.URI(key), offset)
	}
	if length == 0 {
		return io.NopCloser(eofReader{}), nil
	}
	var (
		r   io.ReadCloser
		err error
	)
	if rg, ok := s.(rangeGetter); ok {
		r, err = rg.getRange(ctx, key, offset, length)
	} else if r, err = s.Get(ctx, key); err == nil {
		if _, err = io.CopyN(io.Discard, r, offset); err == io.EOF {
			err = nil // past the end: nothing to read
		}
		if err != nil {
			r.Close()
			return nil, err
		}
	}
	if err != nil {
		return nil, err
	}
	if length < 0 {
		return r, nil
	}
	return limitedCloser{io.LimitReader(r, length), r}, nil
}

// rangeGetter is implemented by stores that read part of an object directly.
// The reader may yield more than length bytes; GetRange limits it.
type rangeGetter interface {
	getRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error)
}

type limitedCloser struct {
	io.Reader
	io.Closer
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

func (l *Local) getRange(ctx context.Context, key string, offset, _ int64) (io.ReadCloser, error) {
	r, err := l.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if _, err := r.(*os.File).Seek(offset, io.SeekStart); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (s *S3) getRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	name, err := s.object(key)
	if err != nil {
		return nil, err
	}
	st, err := s.Stat(ctx, key)
	if err != nil {
		return nil, err
	}
	if offset >= st.Size {
		return io.NopCloser(eofReader{}), nil
	}
	var opts minio.GetObjectOptions
	end := int64(0) // to the end
	if length > 0 && offset+length < st.Size {
		end = offset + length - 1
	}
	if offset > 0 || end > 0 {
		if err := opts.SetRange(offset, end); err != nil {
			return nil, err
		}
	}
	body, _, _, err := s.core.GetObject(ctx, s.bucket, name, opts)
	if err != nil {
		return nil, s.wrap("read", key, err)
	}
	return &s3Body{ReadCloser: body, s: s, key: key}, nil
}
