package artifacts

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/minio/minio-go/v7"
)

// abortUploads aborts the incomplete multipart uploads below the runs in
// ended: the parts that writers which died had sent of objects they never
// completed. The service keeps (and bills) such parts until they are
// aborted; they never show as objects. It returns how many it aborted of
// each run.
func (s *S3) abortUploads(ctx context.Context, ended map[string]bool) (map[string]int, error) {
	base := ""
	if s.prefix != "" {
		base = s.prefix + "/"
	}
	uploads, err := s.incompleteUploads(ctx, base)
	if err != nil {
		return nil, err
	}
	aborted := map[string]int{}
	var errs []error
	for _, u := range uploads {
		run, _, ok := strings.Cut(strings.TrimPrefix(u.Key, base), "/")
		if !ok || !ended[run] {
			continue
		}
		if err := s.core.AbortMultipartUpload(ctx, s.bucket, u.Key, u.UploadID); err != nil {
			var resp minio.ErrorResponse
			if errors.As(err, &resp) && resp.Code == "NoSuchUpload" {
				continue // completed or aborted meanwhile
			}
			errs = append(errs, s.wrap("abort the incomplete upload of", strings.TrimPrefix(u.Key, base), err))
			continue
		}
		aborted[run]++
	}
	return aborted, errors.Join(errs...)
}

// incompleteUploads lists the incomplete multipart uploads of objects whose
// names start with prefix. S3 lists them by prefix; MinIO lists only those
// of one object or of the whole bucket, so when the prefix finds none the
// bucket's are listed and filtered (a credential that may not list the
// whole bucket finds none there).
func (s *S3) incompleteUploads(ctx context.Context, prefix string) ([]minio.ObjectMultipartInfo, error) {
	list := func(p string) ([]minio.ObjectMultipartInfo, error) {
		var out []minio.ObjectMultipartInfo
		for u := range s.core.ListIncompleteUploads(ctx, s.bucket, p, true) {
			if u.Err != nil {
				return nil, s.wrap("list the incomplete uploads of", "", u.Err)
			}
			out = append(out, u)
		}
		return out, nil
	}
	uploads, err := list(prefix)
	if err != nil || len(uploads) > 0 || prefix == "" {
		return uploads, err
	}
	all, err := list("")
	var denied *S3AccessError
	if errors.As(err, &denied) {
		return nil, nil
	}
	return slices.DeleteFunc(all, func(u minio.ObjectMultipartInfo) bool { return !strings.HasPrefix(u.Key, prefix) }), err
}
