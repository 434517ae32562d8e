// Package inputs resolves a step's run-time values before it runs: the
// input artifacts its producers published, the artifacts pipeline
// parameters name, dsl.OneOf and optional inputs, the collected outputs of
// loop steps, and the inputs that take one iteration's outputs. The local
// runner and a step's pod (pipectl exec, its rank pods, pipectl launch)
// resolve through it alike; they differ only in where producers' outputs
// are found (a Source): the local runner's run in memory, or the outputs
// records in the store.
package inputs

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/uris"
	"pipectl.dev/pipectl/pipeline/plan"
)

// Source finds the outputs of a step's producers.
type Source interface {
	// Finished returns an output of a step (or iteration) that succeeded;
	// ok is false when it did not run or was skipped.
	Finished(ref plan.OutputRef) (rec record.OutputRecord, ok bool, err error)
	// Artifact returns the URI and sha256 of an output artifact of a step
	// that ran.
	Artifact(ref plan.OutputRef) (uri, sum string, err error)
	// Iterations returns the output ref.Output of the iterations of loop
	// step ref.Step that ran: all of them when all, else those in its, in
	// order.
	Iterations(ref plan.OutputRef, its []int, all bool) ([]record.OutputRecord, error)
}

// Resolve fills v's input artifacts (v.Artifacts, those of parameters
// too), its dsl.OneOf and optional inputs and the outputs its inputs
// collect from loop steps (v.Collected; but those of
// plan.Wiring.CollectedOuter, which Iteration gives), and returns the
// input artifacts' sha256 by input name, for the fingerprint; artifact
// parameters' URIs are v.Params'. v's maps
// are replaced by copies; v.Upstream, the upstream output parameters, is
// given (by the local runner from its run, in a pod by the workflow).
func Resolve(ctx context.Context, s artifacts.Store, w *plan.Wiring, v *plan.Values, src Source) (sums map[string]string, err error) {
	sums = map[string]string{}
	v.Artifacts = copyOf(v.Artifacts)
	v.Upstream = copyOf(v.Upstream)
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(w.Inputs)) {
		uri, sum, err := src.Artifact(w.Inputs[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("input %q: %w", name, err))
			continue
		}
		v.Artifacts[name], sums[name] = uri, sum
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := AddParamInputs(ctx, s, w, v.Params, v.Artifacts, sums); err != nil {
		return nil, err
	}
	if err := w.ResolveOneOf(v, sums, src.Finished); err != nil {
		return nil, err
	}
	if err := w.ResolveOrDefault(v, sums, src.Finished); err != nil {
		return nil, err
	}
	v.Collected = copyOf(v.Collected)
	got := map[string][]record.OutputRecord{}
	for _, name := range slices.Sorted(maps.Keys(w.Collected)) {
		if _, perIteration := w.CollectedOuter[name]; perIteration {
			continue // iteration by iteration (Iteration)
		}
		recs, err := src.Iterations(w.Collected[name], nil, true)
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", name, err)
		}
		v.Collected[name], got[name] = recs, recs
	}
	addCollectedSums(sums, got)
	return sums, nil
}

// Iteration resolves, for iteration *v.Iteration of a loop step (or a step
// of a looped pipeline), the inputs that take its own iteration's outputs
// (plan.Wiring.Same, SameOneOf) and those that collect the iterations of
// its outer item (plan.Wiring.CollectedOuter), adding their sha256 to a
// copy of sums, which it returns. v's maps are replaced by copies.
func Iteration(w *plan.Wiring, v *plan.Values, sums map[string]string, src Source) (map[string]string, error) {
	if len(w.Same) == 0 && len(w.SameOneOf) == 0 && len(w.CollectedOuter) == 0 {
		return sums, nil
	}
	sums = copyOf(sums)
	v.Upstream, v.Artifacts = copyOf(v.Upstream), copyOf(v.Artifacts)
	if err := w.ResolveSame(v, sums, src.Finished); err != nil {
		return nil, err
	}
	v.Collected = copyOf(v.Collected)
	got := map[string][]record.OutputRecord{}
	for _, name := range slices.Sorted(maps.Keys(w.CollectedOuter)) {
		its, all, err := w.CollectedIterations(name, *v)
		if err != nil {
			return nil, err
		}
		recs, err := src.Iterations(w.Collected[name], its, all)
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", name, err)
		}
		v.Collected[name], got[name] = recs, recs
	}
	addCollectedSums(sums, got)
	return sums, nil
}

// AddParamInputs adds to inputURIs and sums, for each input artifact of w given
// by a pipeline parameter (plan.Wiring.ParamInputs), the parameter's value
// (the URI of an artifact in store s) and that artifact's sha256, from its
// metadata: a URI outside the store, or of no artifact, is an error.
func AddParamInputs(ctx context.Context, s artifacts.Store, w *plan.Wiring, params, inputURIs, sums map[string]string) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(w.ParamInputs)) {
		prm := w.ParamInputs[name]
		uri, ok := params[prm]
		if !ok || uri == "" {
			errs = append(errs, fmt.Errorf("input %q: parameter %q has no value (the URI of an artifact in the store)", name, prm))
			continue
		}
		key, err := artifacts.SplitURI(s, uri)
		if err != nil && uris.CheckImportURI(uri) == nil {
			errs = append(errs, fmt.Errorf("input %q: parameter %q: %s is an object to import, which `pipectl run` (locally or --on argo) copies into the store before the run starts; a run started otherwise (a compiled workflow) must be given the URI of an artifact in the store, such as an output of an earlier run (pipectl artifacts ls RUN)", name, prm, uri))
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("input %q: parameter %q: %w: expected the URI of an artifact in the store, such as an output of an earlier run (pipectl artifacts ls RUN)", name, prm, err))
			continue
		}
		meta, err := artifacts.ReadMetadata(ctx, s, key)
		if err != nil {
			errs = append(errs, fmt.Errorf("input %q: parameter %q: no artifact at %s: %w", name, prm, uri, err))
			continue
		}
		inputURIs[name], sums[name] = uri, meta.SHA256
	}
	return errors.Join(errs...)
}

// addCollectedSums adds to sums, for each input fed the artifacts of a
// loop step's iterations, their sha256 in order, joined by commas.
func addCollectedSums(sums map[string]string, collected map[string][]record.OutputRecord) {
	for name, recs := range collected {
		if len(recs) == 0 || recs[0].URI == "" {
			continue // values: in the invocation's params
		}
		shas := make([]string, len(recs))
		for i, r := range recs {
			shas[i] = r.SHA256
		}
		sums[name] = strings.Join(shas, ",")
	}
}

// copyOf is a copy of m, an empty map when m is nil.
func copyOf[M ~map[K]V, K comparable, V any](m M) M {
	if m == nil {
		return M{}
	}
	return maps.Clone(m)
}
