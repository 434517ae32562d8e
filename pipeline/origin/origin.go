// Package origin records what a run ran: the pipectl that started it, the
// git checkout its pipeline file is in (commit, branch, remote, dirty state
// and a digest of the uncommitted changes), and each step's code digest and
// image, in the run record (record.Origin, StepRecord.Code and Image).
package origin

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/uris"
	"pipectl.dev/pipectl/pipeline"
)

// gitTimeout bounds each git command: a run is never held up by a slow or
// stuck checkout; its origin then has no git part.
const gitTimeout = 10 * time.Second

// Of is the origin of a run of p: the pipectl version given and the git
// checkout holding p's file.
func Of(ctx context.Context, p *pipeline.Pipeline, version string) *record.Origin {
	o := &record.Origin{Pipectl: version}
	if p.Source != "" {
		o.Git = Git(ctx, filepath.Dir(p.Source))
	}
	return o
}

// Steps sets each step record of rec's code digest (after
// pipeline.StampCode) and, for a cluster run, its image: as pinned in
// images (argo.Options.Images), else as written.
func Steps(rec *record.Run, p *pipeline.Pipeline, cluster bool, images map[string]string) {
	for i := range rec.Steps {
		s := p.Step(rec.Steps[i].Name)
		if s == nil || s.Resolved == nil {
			continue
		}
		rec.Steps[i].Code = s.Resolved.Code
		if cluster {
			img := cmp.Or(s.Image, s.Resolved.Image)
			rec.Steps[i].Image = cmp.Or(images[img], img)
		}
	}
}

// Git is the state of the git work tree holding dir, nil when dir is in
// none (or git is not installed, or the checkout is not one git trusts).
// It runs no program the repository configures: no fsmonitor, no external
// diff or text conversion.
func Git(ctx context.Context, dir string) *record.GitOrigin {
	commit, ok := git(ctx, dir, nil, "rev-parse", "--verify", "-q", "HEAD")
	if !ok || commit == "" {
		return nil
	}
	g := &record.GitOrigin{Commit: commit}
	g.Branch, _ = git(ctx, dir, nil, "symbolic-ref", "--short", "-q", "HEAD")
	if remote, ok := git(ctx, dir, nil, "config", "--get", "remote.origin.url"); ok {
		g.Remote = uris.RedactURL(remote)
	}
	if status, ok := git(ctx, dir, nil, "status", "--porcelain", "--untracked-files=normal"); ok && status != "" {
		g.Dirty = true
		h := sha256.New()
		if _, ok := git(ctx, dir, h, "diff", "HEAD", "--binary", "--no-ext-diff", "--no-textconv"); ok {
			g.DiffSHA256 = hex.EncodeToString(h.Sum(nil))
		}
	}
	return g
}

// git runs git in dir: its output trimmed, or streamed to w when set.
func git(ctx context.Context, dir string, w io.Writer, args ...string) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir, "-c", "core.fsmonitor=false", "--no-optional-locks"}, args...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	if w != nil {
		cmd.Stdout = w
	}
	if err := cmd.Run(); err != nil {
		return "", false
	}
	return strings.TrimSpace(out.String()), true
}
