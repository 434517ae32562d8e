package pipeline

import (
	"context"
	"fmt"
)

// StampCode sets the code digest (components.Component.Code) of every step's
// component that ships its folder (ShipsCode), from code(ctx, dir) for its
// run directory: a local run hashes the folder (codepack.Digest), a cluster
// run packs and stores it (codepack.Ship). Each folder is taken once.
func (p *Pipeline) StampCode(ctx context.Context, code func(ctx context.Context, dir string) (string, error)) error {
	digests := map[string]string{}
	for i := range p.Steps {
		s := &p.Steps[i]
		c := s.Resolved
		if c == nil || !c.ShipsCode() {
			continue
		}
		dir := c.RunDir()
		d, ok := digests[dir]
		if !ok {
			var err error
			if d, err = code(ctx, dir); err != nil {
				return fmt.Errorf("step %s: component %s: %w", s.Name, c.Metadata.Name, err)
			}
			digests[dir] = d
		}
		c.Code = d
	}
	return nil
}
