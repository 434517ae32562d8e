package progress_test

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/progress"
)

func TestTerminalProgressNotATerminal(t *testing.T) {
	if p := progress.Terminal(&bytes.Buffer{}); p != nil {
		t.Errorf("progress.Terminal(buffer) = %v, want nil", p)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if p := progress.Terminal(f); p != nil {
		t.Errorf("progress.Terminal(regular file) = %v, want nil", p)
	}
}

func TestProgressBars(t *testing.T) {
	s, err := artifacts.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	big, small := filepath.Join(dir, "big"), filepath.Join(dir, "small")
	writeRandom(t, big, 3<<20)
	writeRandom(t, small, 10<<10)
	var out bytes.Buffer
	ctx := artifacts.WithProgress(t.Context(), progress.NewBars(&out, 1<<20))

	if _, err := artifacts.Publish(ctx, s, "r/s/big", big, artifacts.Metadata{}); err != nil {
		t.Fatal(err)
	}
	if _, err := artifacts.Fetch(ctx, s, "r/s/big", filepath.Join(dir, "got"), artifacts.FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"upload " + s.URI("r/s/big"), "download " + s.URI("r/s/big"), "100%", "3.0/3.0 MiB"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("progress output lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	if _, err := artifacts.Publish(ctx, s, "r/s/small", small, artifacts.Metadata{}); err != nil {
		t.Fatal(err)
	}
	if _, err := artifacts.Publish(t.Context(), s, "r/s/big2", big, artifacts.Metadata{}); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 {
		t.Errorf("a small transfer, or one without Progress, drew a bar:\n%s", out.String())
	}
}

func writeRandom(t *testing.T, p string, size int) {
	t.Helper()
	b := make([]byte, size)
	_, _ = rand.Read(b)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
