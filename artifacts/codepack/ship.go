package codepack

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/untar"
)

// Ship packs dir and stores the pack at Key(digest) unless the store has
// it already; it returns the pack and whether it was uploaded.
func Ship(ctx context.Context, s artifacts.Store, dir string, lim Options) (Pack, bool, error) {
	tmp, err := os.CreateTemp("", "pipectl-code-*.tar")
	if err != nil {
		return Pack{}, false, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	p, err := Write(ctx, dir, tmp, lim)
	if err != nil {
		return Pack{}, false, err
	}
	key := Key(p.Digest)
	if info, err := s.Stat(ctx, key); err == nil && info.Size == p.Size {
		return p, false, nil
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return Pack{}, false, err
	}
	if err := s.Put(ctx, key, tmp, p.Size); err != nil {
		return Pack{}, false, fmt.Errorf("store the code of %s at %s: %w", dir, s.URI(key), err)
	}
	return p, true, nil
}

// Fetch unpacks the pack with digest d from the store into the new folder
// dest: into a temporary folder beside it, checked against d, then renamed
// into place, so dest is whole or absent. Entries must stay inside dest
// (no absolute or .. names, links as Write keeps them) and within lim.
func Fetch(ctx context.Context, s artifacts.Store, d, dest string, lim Options) error {
	if err := CheckDigest(d); err != nil {
		return err
	}
	key := Key(d)
	rc, err := s.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("code package %s: %w", s.URI(key), err)
	}
	defer rc.Close()
	tmp, err := os.MkdirTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".tmp-")
	if err != nil {
		return err
	}
	h := sha256.New()
	ur := untar.NewReader(ctx, io.TeeReader(rc, h), untarLimits(lim))
	err = ur.Extract(tmp, untar.Options{Links: true})
	if err == nil {
		err = ur.Trailer() // the archive's padding counts too, within a bound
	}
	if err == nil && digestOf(h) != d {
		err = fmt.Errorf("its sha256 is %s: the object was changed after it was stored", digestOf(h))
	}
	if err == nil {
		err = os.Rename(tmp, dest)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("code package %s: %w", s.URI(key), err)
	}
	return nil
}

// untarLimits are lim as an archive's bounds.
func untarLimits(lim Options) untar.Limits {
	return untar.Limits{MaxEntries: lim.MaxFiles, MaxBytes: lim.MaxBytes}
}
