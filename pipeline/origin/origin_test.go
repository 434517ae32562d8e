package origin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestGit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if g := Git(ctx, dir); g != nil {
		t.Fatalf("a folder outside any checkout: %+v, want nil", g)
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "-b", "main")
	run("remote", "add", "origin", "https://user:s3cret@git.example.com/team/ml.git")
	sub := filepath.Join(dir, "pipelines")
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(sub, "pipeline.yaml"), []byte("a\n"), 0o644)
	run("add", ".")
	run("commit", "-q", "-m", "first")
	head := run("rev-parse", "HEAD")

	g := Git(ctx, sub)
	if g == nil || g.Commit != head || g.Branch != "main" || g.Dirty || g.DiffSHA256 != "" {
		t.Fatalf("a clean checkout: %+v, want commit %s on main, clean", g, head)
	}
	if strings.Contains(g.Remote, "s3cret") || !strings.Contains(g.Remote, "git.example.com/team/ml.git") {
		t.Errorf("remote %q: want the URL without its credentials", g.Remote)
	}
	os.WriteFile(filepath.Join(sub, "pipeline.yaml"), []byte("b\n"), 0o644)
	dirty := Git(ctx, sub)
	if !dirty.Dirty || len(dirty.DiffSHA256) != 64 {
		t.Fatalf("an edited file: %+v, want dirty with a diff digest", dirty)
	}
	os.WriteFile(filepath.Join(sub, "pipeline.yaml"), []byte("c\n"), 0o644)
	if other := Git(ctx, sub); other.DiffSHA256 == dirty.DiffSHA256 {
		t.Error("another edit gave the same diff digest")
	}
	run("checkout", "-q", "--detach")
	if g := Git(ctx, sub); g.Branch != "" || g.Commit != head {
		t.Errorf("detached: %+v, want no branch", g)
	}
}
