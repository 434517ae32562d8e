package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/pipeline/plan"
)

// cacheKey is the store key of a fingerprint's cache entry.
func cacheKey(fp string) string { return ".cache/" + fp + ".json" }

// cacheEntry records which step of which run produced a fingerprint's outputs.
type cacheEntry struct {
	Run     string                   `json:"run"`
	Step    string                   `json:"step"`
	Created time.Time                `json:"created"`
	Outputs []artifacts.OutputRecord `json:"outputs"`
}

// fingerprint identifies a step's work: the component spec (image
// included), the files its command names in the component's directory, the
// resolved parameter values, the input artifacts' sha256 and the gang shape.
func fingerprint(ctx context.Context, inv *components.Invocation, inputSums map[string]string, sp *plan.Step) (string, error) {
	// Inputs fed by artifacts (KFP passes an artifact to an input parameter
	// by its content) count by their sha256, in inputSums.
	c := *inv.Component
	c.Inputs = slices.DeleteFunc(slices.Clone(c.Inputs), func(in components.IO) bool {
		_, fed := inv.Inputs[in.Name]
		_, collected := inv.Collected[in.Name]
		return fed || collected
	})
	params, err := c.ParamValues(inv.Params)
	if err != nil {
		return "", err
	}
	files := map[string]string{}
	for _, arg := range append(append([]string{}, inv.Component.Command...), inv.Component.Args...) {
		if arg == "" || filepath.IsAbs(arg) || inv.Component.Dir == "" {
			continue
		}
		p := filepath.Join(inv.Component.Dir, inv.Component.WorkingDir, arg)
		sum, err := artifacts.FileSum(ctx, p)
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if err != nil {
			continue // not a regular file: an ordinary argument
		}
		files[arg] = sum
	}
	doc := struct {
		Component *components.Component `json:"component"`
		Files     map[string]string     `json:"files"`
		Params    map[string]string     `json:"params"`
		Inputs    map[string]string     `json:"inputs"`
		Env       []string              `json:"env"`
		Nodes     int                   `json:"nodes,omitempty"`
		Procs     int                   `json:"procs,omitempty"`
	}{inv.Component, files, params, inputSums, inv.Env, 0, 0}
	if d := sp.Distributed; d != nil {
		doc.Nodes, doc.Procs = d.Nodes, d.LocalProcsPerNode
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// lookupCache returns the cache entry of fp when every artifact it names is
// still complete in the store with the same sha256.
func lookupCache(ctx context.Context, s artifacts.Store, fp string) (cacheEntry, bool) {
	var e cacheEntry
	if err := artifacts.GetJSON(ctx, s, cacheKey(fp), &e); err != nil {
		return e, false
	}
	for _, o := range e.Outputs {
		if o.URI == "" {
			continue
		}
		key, err := artifacts.SplitURI(s, o.URI)
		if err != nil {
			return e, false
		}
		meta, err := artifacts.ReadMetadata(ctx, s, key)
		if err != nil || meta.SHA256 != o.SHA256 {
			return e, false
		}
	}
	return e, true
}

func storeCache(ctx context.Context, s artifacts.Store, fp string, e cacheEntry) error {
	e.Created = time.Now().UTC()
	return artifacts.PutJSON(ctx, s, cacheKey(fp), e)
}
