package checkpoint

import (
	"context"
	"fmt"
)

// Directory is Dir (gang.Checkpointer).
func (k *Keeper) Directory() string { return k.Dir }

// Prepare is Restore, said in a line ("" when there was nothing to
// restore; gang.Checkpointer).
func (k *Keeper) Prepare(ctx context.Context) (string, error) {
	r, err := k.Restore(ctx)
	if err != nil || r.Generation == 0 {
		return "", err
	}
	return r.String(), nil
}

// Save is Sync, said in a line ("" when nothing changed; gang.Checkpointer).
func (k *Keeper) Save(ctx context.Context) (string, error) {
	gen, err := k.Sync(ctx)
	if err != nil || gen == 0 {
		return "", err
	}
	return fmt.Sprintf("checkpoint %d kept (%s)", gen, k.Store.URI(Prefix(k.Run, k.Step)+genName(gen)+"/")), nil
}
