package artifacts

import (
	"context"
	"io"
	"strings"
	"testing"
)

// plainStore hides the optional interfaces of a store: GetRange's fallback.
type plainStore struct{ Store }

func TestGetRange(t *testing.T) {
	ctx := context.Background()
	local, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s3, _ := newTestS3(t, "ranges", S3Options{})
	const data = "0123456789"
	stores := map[string]Store{"local": local, "s3": s3, "fallback": plainStore{local}}
	cases := []struct {
		name           string
		offset, length int64
		want           string
	}{
		{"whole", 0, -1, data},
		{"head", 0, 4, "0123"},
		{"middle", 3, 4, "3456"},
		{"tail", 7, -1, "789"},
		{"past the end of the length", 8, 10, "89"},
		{"at the end", 10, -1, ""},
		{"beyond the end", 12, 3, ""},
		{"empty", 2, 0, ""},
	}
	for sname, s := range stores {
		if err := s.Put(ctx, "r/s/o", strings.NewReader(data), int64(len(data))); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			r, err := GetRange(ctx, s, "r/s/o", c.offset, c.length)
			if err != nil {
				t.Errorf("%s %s: %v", sname, c.name, err)
				continue
			}
			got, err := io.ReadAll(r)
			r.Close()
			if err != nil || string(got) != c.want {
				t.Errorf("%s %s: GetRange(%d, %d) = %q, %v; want %q", sname, c.name, c.offset, c.length, got, err, c.want)
			}
		}
		if _, err := GetRange(ctx, s, "r/../../etc/passwd", 0, -1); err == nil {
			t.Errorf("%s: GetRange accepted a key leaving the store", sname)
		}
		if _, err := GetRange(ctx, s, "r/s/missing", 0, -1); err == nil {
			t.Errorf("%s: GetRange of a missing object did not fail", sname)
		}
	}
}
