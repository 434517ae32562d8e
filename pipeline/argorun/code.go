package argorun

import (
	"context"
	"fmt"
	"io"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/codepack"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/runview"
)

// ShipCode packs the folder of every component of p that ships its code
// and stores each pack in the store once (codepack.Ship), stamping the
// components with their digests, so the compiled workflow's pods run the
// code of this checkout; it says what it shipped on status.
func ShipCode(ctx context.Context, store artifacts.Store, p *pipeline.Pipeline, status io.Writer) error {
	var folders, uploaded int
	var size int64
	err := p.StampCode(ctx, func(ctx context.Context, dir string) (string, error) {
		pack, up, err := codepack.Ship(ctx, store, dir, codepack.Defaults)
		if err != nil {
			return "", err
		}
		folders++
		if up {
			uploaded++
			size += pack.Size
		}
		return pack.Digest, nil
	})
	if err != nil {
		return err
	}
	if folders > 0 {
		fmt.Fprintf(status, "Code: %d component folder(s), %d stored now (%s), the rest already in the store\n", folders, uploaded, runview.Bytes(size))
	}
	return nil
}
