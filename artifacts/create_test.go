package artifacts

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
	"testing"
)

// TestCreateExclusive: Create never replaces an object, also when several
// race for one key: exactly one wins and its bytes stay.
func TestCreateExclusive(t *testing.T) {
	stores := map[string]func(t *testing.T) Store{
		"local": func(t *testing.T) Store {
			s, err := NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"s3": func(t *testing.T) Store { s, _ := newTestS3(t, "team/a", S3Options{}); return s },
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			ctx := t.Context()
			if err := s.Create(ctx, "r/run.json", strings.NewReader("first"), 5); err != nil {
				t.Fatalf("Create of a new key: %v", err)
			}
			err := s.Create(ctx, "r/run.json", strings.NewReader("second"), 6)
			if !errors.Is(err, fs.ErrExist) {
				t.Fatalf("Create of an existing key = %v, want fs.ErrExist", err)
			}
			const racers = 8
			var wg sync.WaitGroup
			errs := make([]error, racers)
			for i := range racers {
				wg.Go(func() {
					v := fmt.Sprintf("racer %d", i)
					errs[i] = s.Create(ctx, "race/run.json", strings.NewReader(v), int64(len(v)))
				})
			}
			wg.Wait()
			won := -1
			for i, err := range errs {
				switch {
				case err == nil && won >= 0:
					t.Errorf("racers %d and %d both created the object", won, i)
				case err == nil:
					won = i
				case !errors.Is(err, fs.ErrExist):
					t.Errorf("racer %d: %v", i, err)
				}
			}
			for key, want := range map[string]string{"r/run.json": "first", "race/run.json": fmt.Sprintf("racer %d", won)} {
				r, err := s.Get(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(r)
				r.Close()
				if string(b) != want {
					t.Errorf("%s holds %q, want %q", key, b, want)
				}
			}
		})
	}
}
