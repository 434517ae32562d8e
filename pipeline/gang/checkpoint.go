package gang

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Checkpointer keeps a gang's checkpoint directory (the ranks'
// PIPECTL_CHECKPOINT_DIR) across its attempts, the step's retries and
// reruns (package checkpoint's Keeper).
type Checkpointer interface {
	// Directory is the directory the ranks are given.
	Directory() string
	// Prepare makes the directory the latest complete checkpoint (or
	// empty), before an attempt starts, and says what it restored ("" for
	// nothing).
	Prepare(ctx context.Context) (string, error)
	// Save keeps the directory's contents when they changed, and says what
	// it stored ("" for nothing).
	Save(ctx context.Context) (string, error)
}

// checkpointLoop saves the checkpoint directory every interval until
// stop is called, which saves it a last time (the ranks have exited).
type checkpointLoop struct {
	stopc chan struct{}
	wg    sync.WaitGroup
}

func (g *Gang) startCheckpoints(ctx context.Context) *checkpointLoop {
	l := &checkpointLoop{stopc: make(chan struct{})}
	if g.Checkpoint == nil || g.CheckpointEvery <= 0 {
		return l
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		t := time.NewTicker(g.CheckpointEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				g.saveCheckpoint(ctx)
			case <-l.stopc:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return l
}

// stop ends the loop and saves the directory once more.
func (l *checkpointLoop) stop(ctx context.Context, g *Gang) {
	close(l.stopc)
	l.wg.Wait()
	if g.Checkpoint != nil {
		g.saveCheckpoint(context.WithoutCancel(ctx))
	}
}

func (g *Gang) saveCheckpoint(ctx context.Context) {
	msg, err := g.Checkpoint.Save(ctx)
	switch {
	case err != nil:
		g.logf("warning: checkpoint not kept: %v", err)
	case msg != "":
		g.logf("%s", msg)
	}
}

// prepareCheckpoint restores the checkpoint before an attempt.
func (g *Gang) prepareCheckpoint(ctx context.Context) error {
	if g.Checkpoint == nil {
		return nil
	}
	msg, err := g.Checkpoint.Prepare(ctx)
	if err != nil {
		return fmt.Errorf("restore the checkpoint: %w", err)
	}
	if msg != "" {
		g.logf("%s", msg)
	}
	return nil
}

func (g *Gang) logf(format string, args ...any) {
	if g.Logf != nil {
		g.Logf(format, args...)
	}
}
