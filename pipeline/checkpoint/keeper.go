package checkpoint

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"pipectl.dev/pipectl/artifacts"
)

const (
	// DefaultKeep is how many generations stay in the store by default.
	DefaultKeep = 1
	// MaxKeep bounds checkpoint.keep.
	MaxKeep = 100
	// DefaultEvery is how often a running gang's directory is synced by
	// default (it is also synced when each gang attempt ends).
	DefaultEvery = time.Minute
	// Folder is the folder of a step's checkpoints in its run's folder.
	Folder = ".checkpoint"
	// maxFiles bounds the files of one checkpoint.
	maxFiles = 10000
	// maxManifest bounds the size of a manifest read back.
	maxManifest = 4 << 20
)

// Prefix is the store prefix of the checkpoints of step in run.
func Prefix(run, step string) string { return run + "/" + step + "/" + Folder + "/" }

// Manifest lists the files of one complete generation.
type Manifest struct {
	Generation int       `json:"generation"`
	Run        string    `json:"run"`
	Step       string    `json:"step"`
	Created    time.Time `json:"created"`
	Files      []File    `json:"files"`
}

// File is one file of a checkpoint: its slash-separated path in the
// directory, size and sha256 (hex).
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Keeper keeps Dir, the checkpoint directory of step Step of run Run, in
// Store. Its methods are safe for concurrent use.
type Keeper struct {
	Store     artifacts.Store
	Run, Step string
	// From, when set, is the run whose last checkpoint of the step Restore
	// falls back to while this run has none (a rerun resumes).
	From string
	// Dir is the local directory the ranks write.
	Dir string
	// Keep is how many generations stay in the store (DefaultKeep when 0).
	Keep int

	mu sync.Mutex
	// synced is the signature of the directory as last synced or
	// restored from this run's checkpoints ("" when it is not).
	synced string
}

// Restored says what Restore did.
type Restored struct {
	// Run and Generation are the checkpoint restored (Generation 0: none).
	Run        string
	Generation int
	Files      int
	Bytes      int64
}

func (r Restored) String() string {
	if r.Generation == 0 {
		return "no checkpoint yet: the checkpoint directory starts empty"
	}
	return fmt.Sprintf("restored checkpoint %d of run %s (%d file(s), %d bytes)", r.Generation, r.Run, r.Files, r.Bytes)
}

// Restore makes Dir hold the latest complete checkpoint of the step in
// this run or, when it has none, in From; Dir is emptied when neither
// has one. A generation whose files are missing or damaged is passed
// over for the one before it.
func (k *Keeper) Restore(ctx context.Context) (Restored, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, run := range []string{k.Run, k.From} {
		if run == "" {
			continue
		}
		gens, err := k.generations(ctx, run)
		if err != nil {
			return Restored{}, err
		}
		for i := len(gens) - 1; i >= 0; i-- {
			m, err := k.manifest(ctx, run, gens[i])
			if err == nil {
				err = k.fetch(ctx, run, m)
			}
			if ctx.Err() != nil {
				return Restored{}, ctx.Err()
			}
			if err != nil {
				continue // an incomplete or damaged generation: the one before
			}
			k.synced = ""
			if run == k.Run {
				k.synced, _, _ = signature(k.Dir)
			}
			r := Restored{Run: run, Generation: m.Generation, Files: len(m.Files)}
			for _, f := range m.Files {
				r.Bytes += f.Size
			}
			return r, nil
		}
	}
	if err := os.RemoveAll(k.Dir); err != nil {
		return Restored{}, err
	}
	k.synced = ""
	return Restored{}, os.MkdirAll(k.Dir, 0o755)
}

// fetch downloads generation m of run into a fresh folder beside Dir,
// checking each file's sha256, and puts it in Dir's place.
func (k *Keeper) fetch(ctx context.Context, run string, m *Manifest) error {
	parent := filepath.Dir(k.Dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(k.Dir)+"-restore-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	genPrefix := Prefix(run, k.Step) + genName(m.Generation) + "/"
	for _, f := range m.Files {
		dest := filepath.Join(tmp, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
			return err
		}
		w, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		err = artifacts.Copy(ctx, k.Store, genPrefix+f.Path, w, f.SHA256)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	if err := os.RemoveAll(k.Dir); err != nil {
		return err
	}
	return os.Rename(tmp, k.Dir)
}

// Sync stores Dir as a new generation when it changed since the last sync
// or restore, and removes the generations beyond Keep. It returns the new
// generation (0 when nothing changed, Dir is empty or a file changed while
// it was read: the next sync takes it).
func (k *Keeper) Sync(ctx context.Context) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	sig, files, err := signature(k.Dir)
	if err != nil || sig == k.synced || len(files) == 0 {
		return 0, err
	}
	if len(files) > maxFiles {
		return 0, fmt.Errorf("checkpoint directory holds %d files: at most %d are kept", len(files), maxFiles)
	}
	gens, err := k.generations(ctx, k.Run)
	if err != nil {
		return 0, err
	}
	gen := 1
	if len(gens) > 0 {
		gen = gens[len(gens)-1] + 1
	}
	prefix := Prefix(k.Run, k.Step)
	k.removeGeneration(ctx, k.Run, gen) // what a sync cut short left there
	m := Manifest{Generation: gen, Run: k.Run, Step: k.Step, Created: time.Now().UTC()}
	for _, f := range files {
		sum, err := k.upload(ctx, prefix+genName(gen)+"/"+f.Path, filepath.Join(k.Dir, filepath.FromSlash(f.Path)), f.Size)
		if err != nil {
			k.removeGeneration(ctx, k.Run, gen)
			if errors.Is(err, errChanged) {
				return 0, nil
			}
			return 0, err
		}
		m.Files = append(m.Files, File{Path: f.Path, Size: f.Size, SHA256: sum})
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return 0, err
	}
	if err := k.Store.Create(ctx, prefix+genName(gen)+".json", bytes.NewReader(b), int64(len(b))); err != nil {
		k.removeGeneration(ctx, k.Run, gen)
		return 0, err
	}
	k.synced = sig
	k.prune(ctx, append(gens, gen))
	return gen, nil
}

var errChanged = errors.New("changed while it was read")

// upload puts the file at p (size bytes) at key and returns its sha256;
// errChanged when the file changed meanwhile.
func (k *Keeper) upload(ctx context.Context, key, p string, size int64) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", errChanged
		}
		return "", err
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return "", err
	}
	if before.Size() != size {
		return "", errChanged
	}
	h := sha256.New()
	if err := k.Store.Put(ctx, key, io.TeeReader(io.LimitReader(f, size), h), size); err != nil {
		return "", err
	}
	after, err := os.Stat(p)
	if err != nil || after.Size() != size || !after.ModTime().Equal(before.ModTime()) || !os.SameFile(before, after) {
		return "", errChanged
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// prune removes the generations before the latest Keep and what a sync
// cut short left (a generation folder without its manifest).
func (k *Keeper) prune(ctx context.Context, gens []int) {
	keep := cmp.Or(k.Keep, DefaultKeep)
	for i := 0; i < len(gens)-keep; i++ {
		k.removeGeneration(ctx, k.Run, gens[i])
	}
	entries, err := k.Store.List(ctx, Prefix(k.Run, k.Step), false)
	if err != nil {
		return
	}
	for _, e := range entries {
		n, ok := parseGen(strings.TrimSuffix(path.Base(e.Key), "/"))
		if e.Dir && ok && !slices.Contains(gens[max(0, len(gens)-keep):], n) {
			k.removeGeneration(ctx, k.Run, n)
		}
	}
}

// removeGeneration removes a generation: its manifest first (it is no
// longer restored), then its files.
func (k *Keeper) removeGeneration(ctx context.Context, run string, gen int) {
	prefix := Prefix(run, k.Step) + genName(gen)
	_ = k.Store.Delete(ctx, prefix+".json")
	objs, err := k.Store.List(ctx, prefix+"/", true)
	if err != nil {
		return
	}
	for _, o := range objs {
		_ = k.Store.Delete(ctx, o.Key)
	}
}

// generations are the complete generations of the step in run (those
// with a manifest), oldest first.
func (k *Keeper) generations(ctx context.Context, run string) ([]int, error) {
	entries, err := k.Store.List(ctx, Prefix(run, k.Step), false)
	if err != nil {
		return nil, err
	}
	var gens []int
	for _, e := range entries {
		if e.Dir {
			continue
		}
		if n, ok := parseGen(strings.TrimSuffix(path.Base(e.Key), ".json")); ok && strings.HasSuffix(e.Key, ".json") {
			gens = append(gens, n)
		}
	}
	slices.Sort(gens)
	return gens, nil
}

// manifest reads the manifest of generation gen of run.
func (k *Keeper) manifest(ctx context.Context, run string, gen int) (*Manifest, error) {
	r, err := k.Store.Get(ctx, Prefix(run, k.Step)+genName(gen)+".json")
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxManifest))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, f := range m.Files {
		if !validPath(f.Path) {
			return nil, fmt.Errorf("checkpoint %d of run %s: invalid file path %q", gen, run, f.Path)
		}
	}
	m.Generation = gen
	return &m, nil
}

// validPath accepts a clean relative slash path that stays inside the
// directory.
func validPath(p string) bool {
	return p != "" && p == path.Clean(p) && !path.IsAbs(p) && p != ".." && !strings.HasPrefix(p, "../") && !strings.Contains(p, "\\")
}

func genName(gen int) string { return fmt.Sprintf("%08d", gen) }

func parseGen(s string) (int, bool) {
	if len(s) != 8 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

// Skipped says whether a file or folder of the checkpoint directory is
// left out of a checkpoint: names beginning with "." or ending in ".tmp"
// are where a program writes before it renames (what is half written is
// never kept).
func Skipped(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".tmp")
}

// signature lists the regular files of dir that a checkpoint keeps, and
// sums up their paths, sizes and modification times.
func signature(dir string) (string, []File, error) {
	var files []File
	var sig strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed meanwhile, or no directory yet
			}
			return err
		}
		if p == dir {
			return nil
		}
		if Skipped(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // folders are walked; links and devices are not kept
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files = append(files, File{Path: filepath.ToSlash(rel), Size: info.Size()})
		fmt.Fprintf(&sig, "%s\x00%d\x00%d\n", filepath.ToSlash(rel), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	return sig.String(), files, err
}
