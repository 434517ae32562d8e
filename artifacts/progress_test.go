package artifacts

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTerminalProgressNotATerminal(t *testing.T) {
	if p := TerminalProgress(&bytes.Buffer{}); p != nil {
		t.Errorf("TerminalProgress(buffer) = %v, want nil", p)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if p := TerminalProgress(f); p != nil {
		t.Errorf("TerminalProgress(regular file) = %v, want nil", p)
	}
}

func TestProgressBars(t *testing.T) {
	s, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	big, small := filepath.Join(dir, "big"), filepath.Join(dir, "small")
	writeRandom(t, big, 3<<20)
	writeRandom(t, small, 10<<10)
	var out bytes.Buffer
	ctx := WithProgress(t.Context(), NewBarProgress(&out, 1<<20))

	if _, err := Publish(ctx, s, "r/s/big", big, Metadata{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Fetch(ctx, s, "r/s/big", filepath.Join(dir, "got"), FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"upload " + s.URI("r/s/big"), "download " + s.URI("r/s/big"), "100%", "3.0/3.0 MiB"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("progress output lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	if _, err := Publish(ctx, s, "r/s/small", small, Metadata{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Publish(t.Context(), s, "r/s/big2", big, Metadata{}); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 {
		t.Errorf("a small transfer, or one without Progress, drew a bar:\n%s", out.String())
	}
}
