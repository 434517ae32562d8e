package artifacts

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// failingRead is a store whose objects fail to read after their first
// bytes, as a connection that drops would.
type failingRead struct{ Store }

var errDropped = errors.New("connection dropped")

func (f failingRead) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	return io.NopCloser(io.MultiReader(strings.NewReader(`{"a": `), errReader{})), nil
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errDropped }

// A value its type refuses is a corrupt object; a read the store fails is
// not: the object may be sound, and a listing must not skip it as bad.
func TestGetJSONCorruptOrNot(t *testing.T) {
	ctx := context.Background()
	s, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := `{"at": "0001-01-01T00:00n00Z"}`
	if err := s.Put(ctx, "t.json", strings.NewReader(b), int64(len(b))); err != nil {
		t.Fatal(err)
	}
	var v struct{ At time.Time }
	var ce *CorruptError
	if err := GetJSON(ctx, s, "t.json", &v); !errors.As(err, &ce) {
		t.Fatalf("a bad time: %v, want a CorruptError", err)
	}
	err = GetJSON(ctx, failingRead{s}, "t.json", &v)
	if errors.As(err, &ce) || !errors.Is(err, errDropped) {
		t.Fatalf("a failed read: %v, want the read's error and no CorruptError", err)
	}
}
