package checkpoint

import (
	"context"
	"time"

	"pipectl.dev/pipectl/artifacts"
)

// Summary is a step's latest complete checkpoint as `pipectl artifacts
// ls` and lineage show it: not an output of the step, and no part of its
// fingerprint.
type Summary struct {
	// Generation is the checkpoint's number (1 for the first sync).
	Generation int `json:"generation"`
	// Files and Size are its files and their bytes in all.
	Files int   `json:"files"`
	Size  int64 `json:"size"`
	// Created is when its sync began.
	Created time.Time `json:"created"`
	// URI is the folder of its files in the store.
	URI string `json:"uri"`
}

// Latest is the latest complete checkpoint of step in run (nil when it
// has none).
func Latest(ctx context.Context, store artifacts.Store, run, step string) (*Summary, error) {
	k := &Keeper{Store: store, Run: run, Step: step}
	gens, err := k.generations(ctx, run)
	if err != nil {
		return nil, err
	}
	for i := len(gens) - 1; i >= 0; i-- {
		m, err := k.manifest(ctx, run, gens[i])
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue // removed meanwhile (pruned by a sync), or damaged
		}
		s := &Summary{Generation: m.Generation, Files: len(m.Files), Created: m.Created, URI: store.URI(Prefix(run, step) + genName(m.Generation) + "/")}
		for _, f := range m.Files {
			s.Size += f.Size
		}
		return s, nil
	}
	return nil, nil
}
