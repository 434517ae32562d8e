package cmdutil

import (
	"strings"
	"testing"
	"time"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/components/record"
)

// TestTrustRerun: on a terminal the origin is shown (control characters
// of the record defused) and the answer decides; without one, --yes is
// needed (a usage error naming it); --yes asks nothing.
func TestTrustRerun(t *testing.T) {
	run := &record.Run{ID: "r1", Pipeline: "p\x1b[2J", Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Origin: &record.Origin{Pipectl: "v1", Pipeline: &record.PipelineSource{Pack: "sha256:" + strings.Repeat("a", 64), File: "p.yaml"},
			Git: &record.GitOrigin{Commit: "abc123", Branch: "main", Remote: "https://example.com/x.git", Dirty: true}}}
	for _, tc := range []struct {
		answer string
		ok     bool
	}{{"y\n", true}, {"yes\n", true}, {"n\n", false}, {"\n", false}} {
		ios, in, _, errOut := podutil.Test()
		ios.InTTY, ios.ErrTTY = true, true
		in.WriteString(tc.answer)
		err := TrustRerun(ios, run, false)
		if (err == nil) != tc.ok {
			t.Errorf("answer %q: %v", tc.answer, err)
		}
		for _, want := range []string{"Rerun of run r1 (pipeline p?[2J, started 2026-01-02 03:04:05Z)", "pack sha256:aaaa", "file p.yaml",
			"commit abc123 on branch main of https://example.com/x.git, with uncommitted changes", "pipectl: v1", "Run this code? [y/N]"} {
			if !strings.Contains(errOut.String(), want) {
				t.Errorf("answer %q: stderr %q lacks %q", tc.answer, errOut, want)
			}
		}
	}
	ios, _, _, errOut := podutil.Test()
	err := TrustRerun(ios, run, false)
	if err == nil || podutil.Code(err) != podutil.ExitUsage || !strings.Contains(err.Error(), "pass --yes") || !strings.Contains(err.Error(), "commit abc123") || errOut.Len() != 0 {
		t.Errorf("no terminal: %v (exit %d), stderr %q", err, podutil.Code(err), errOut)
	}
	if err := TrustRerun(ios, run, true); err != nil {
		t.Errorf("--yes: %v", err)
	}
	if err := TrustRerun(ios, nil, false); err != nil {
		t.Errorf("not a rerun: %v", err)
	}
}
