package execution

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/codepack"
	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/process"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/regular"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// Workspace is an invocation's local directory: code/ is the component's
// folder in a pod, inputs/<name> holds fetched
// input artifacts; outputs/<name> is where rank 0 (or the only process)
// writes outputs; ranks/<n>/<name> are throw-away output paths for the other ranks.
type Workspace struct {
	Dir string
}

// CodePath is where a pod unpacks the component's code (components.Program.Code).
func (w Workspace) CodePath() string { return filepath.Join(w.Dir, "code") }

// InputPath is where input artifact name is materialised.
func (w Workspace) InputPath(name string) string { return filepath.Join(w.Dir, "inputs", name) }

// MetricsDir is where the ranks of a distributed step append their
// metrics (their PIPECTL_METRICS files).
func (w Workspace) MetricsDir() string { return filepath.Join(w.Dir, "metrics") }

// CheckpointDir is the checkpoint directory of the ranks of a distributed
// step (their PIPECTL_CHECKPOINT_DIR).
func (w Workspace) CheckpointDir() string { return filepath.Join(w.Dir, "checkpoint") }

// OutputDir is where the outputs of rank (0 publishes) are written.
func (w Workspace) OutputDir(rank int) string {
	if rank == 0 {
		return filepath.Join(w.Dir, "outputs")
	}
	return filepath.Join(w.Dir, "ranks", fmt.Sprint(rank))
}

// Runtime executes invocations against an artifact store.
type Runtime struct {
	Store artifacts.Store
}

// Prepare checks the invocation, fetches its input artifacts into ws and
// resolves every input parameter (defaults included). In a pod whose
// program ships its code, it unpacks the code pack into ws and points
// inv.Component at a copy of the program whose folder it is (the plan's
// program is left as it is): read inv.Component after Prepare. An artifact given to
// an input parameter gives its content as the value; a value given to an
// artifact input is written to the input's file.
func (rt *Runtime) Prepare(ctx context.Context, inv *components.Invocation, ws Workspace) (_ components.Placeholders, err error) {
	c := *inv.Component // Prepare may point it at the code pack: the caller's stays
	inv.Component = &c
	v := components.Placeholders{
		Params:     map[string]string{},
		InputPaths: map[string]string{},
		InputURIs:  map[string]string{},
	}
	// The code pack and the input artifacts are fetched at once: a pod's
	// store round trips overlap.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fetches, fctx := errgroup.WithContext(ctx)
	fetches.SetLimit(inputConcurrency)
	defer func() {
		if err != nil { // returned before waiting: the fetches stop
			cancel()
			_ = fetches.Wait()
		}
	}()
	if c.Code != "" && c.Dir == "" {
		// In a pod: the component's folder is the pack its digest names.
		dest := ws.CodePath()
		if err := os.RemoveAll(dest); err != nil { // an earlier start's
			return v, err
		}
		fetches.Go(func() error {
			if err := codepack.Fetch(fctx, rt.Store, c.Code, dest, codepack.Defaults); err != nil {
				return fmt.Errorf("component %s: %w", c.Name, err)
			}
			return nil
		})
		c.Dir, c.WorkingDir = dest, ""
	}
	if err := checkInputs(&c, inv); err != nil {
		return v, err
	}
	// A value may feed an artifact input (it becomes a file) and an artifact
	// an input parameter (its content becomes the value), as KFP passes data.
	given := maps.Clone(inv.Params)
	for _, in := range c.Inputs {
		if uri, ok := inv.Inputs[in.Name]; ok && !components.IsArtifact(in.Type) {
			val, err := rt.fetchValue(ctx, uri, ws.InputPath(in.Name))
			if err != nil {
				return v, fmt.Errorf("input %q: %w", in.Name, err)
			}
			if given == nil {
				given = map[string]string{}
			}
			given[in.Name] = val
		}
	}
	params, err := c.ParamValues(given)
	if err != nil {
		return v, err
	}
	v.Params = params
	v.Run, v.Step, v.Pod = inv.Run, inv.Step, inv.Pod
	v.InputMetadata = inv.Metadata
	if v.Pod == "" {
		v.Pod = inv.Run + "-" + inv.Step
	}
	if err := writeParamFiles(&c, ws, v); err != nil {
		return v, err
	}
	if err := rt.fetchArtifacts(fctx, fetches, &c, inv, ws, &v); err != nil {
		return v, err
	}
	return v, fetches.Wait()
}

// inputConcurrency bounds the input artifacts (and the code pack) a pod
// fetches at once.
const inputConcurrency = 4

// checkInputs fails when inv gives a value to an input c does not have.
func checkInputs(c *components.Program, inv *components.Invocation) error {
	for _, m := range []map[string]string{inv.Params, inv.Inputs} {
		for name := range m {
			if _, ok := c.Input(name); !ok {
				return fmt.Errorf("component %s has no input %q", c.Name, name)
			}
		}
	}
	for name := range inv.Collected {
		if in, ok := c.Input(name); !ok || !components.IsArtifact(in.Type) {
			return fmt.Errorf("component %s has no input artifact %q to collect outputs into", c.Name, name)
		}
	}
	return nil
}

// fetchArtifacts starts, in g, the fetch of each input artifact of inv
// into ws and records its path (and URI) in v; a value given to an artifact
// input is written to its file.
func (rt *Runtime) fetchArtifacts(ctx context.Context, g *errgroup.Group, c *components.Program, inv *components.Invocation, ws Workspace, v *components.Placeholders) error {
	for _, in := range c.Inputs {
		if !components.IsArtifact(in.Type) {
			continue
		}
		if val, ok := inv.Params[in.Name]; ok {
			dest := ws.InputPath(in.Name)
			if err := writeFile(dest, val); err != nil {
				return fmt.Errorf("input %q: %w", in.Name, err)
			}
			v.InputPaths[in.Name] = dest
			continue
		}
		if uris, ok := inv.Collected[in.Name]; ok {
			dest := ws.InputPath(in.Name)
			g.Go(func() error {
				if _, err := rt.fetchCollected(ctx, uris, dest); err != nil {
					return fmt.Errorf("input %q: %w", in.Name, err)
				}
				return nil
			})
			v.InputPaths[in.Name] = dest
			if v.InputLists == nil {
				v.InputLists = map[string]int{}
			}
			v.InputLists[in.Name] = len(uris)
			continue
		}
		uri, ok := inv.Inputs[in.Name]
		if !ok {
			if in.Required() {
				return fmt.Errorf("input artifact %q (%s) has no value", in.Name, in.Type)
			}
			continue
		}
		key, err := artifacts.SplitURI(rt.Store, uri)
		if err != nil {
			return fmt.Errorf("input %q: %w", in.Name, err)
		}
		dest := ws.InputPath(in.Name)
		// The workspace is the runtime's own: a copy an earlier start of
		// this step left (a restarted container) goes.
		if err := os.RemoveAll(dest); err != nil {
			return fmt.Errorf("input %q: %w", in.Name, err)
		}
		g.Go(func() error {
			if _, err := artifacts.Fetch(ctx, rt.Store, key, dest, artifacts.FetchOptions{}); err != nil {
				return fmt.Errorf("input %q: %w", in.Name, err)
			}
			return nil
		})
		v.InputPaths[in.Name], v.InputURIs[in.Name] = dest, uri
	}
	return nil
}

// fetchCollected fetches the artifact at uris[i] to dest/<i>, for each i.
func (rt *Runtime) fetchCollected(ctx context.Context, uris []string, dest string) (string, error) {
	if err := os.RemoveAll(dest); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return "", err
	}
	for i, uri := range uris {
		key, err := artifacts.SplitURI(rt.Store, uri)
		if err != nil {
			return "", err
		}
		if _, err := artifacts.Fetch(ctx, rt.Store, key, filepath.Join(dest, strconv.Itoa(i)), artifacts.FetchOptions{}); err != nil {
			return "", fmt.Errorf("iteration %d: %w", i, err)
		}
	}
	return dest, nil
}

// MaxArtifactValue is the size of the largest artifact that may feed an
// input parameter.
const MaxArtifactValue = 1 << 20

// fetchValue fetches the artifact at uri to dest and returns its content as
// a value, without trailing line breaks (as an output parameter's).
func (rt *Runtime) fetchValue(ctx context.Context, uri, dest string) (string, error) {
	key, err := artifacts.SplitURI(rt.Store, uri)
	if err != nil {
		return "", err
	}
	if _, err := artifacts.Fetch(ctx, rt.Store, key, dest, artifacts.FetchOptions{}); err != nil {
		return "", err
	}
	st, err := os.Stat(dest)
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() || st.Size() > MaxArtifactValue {
		return "", fmt.Errorf("artifact %s is a directory or larger than %d bytes: too big to pass as a value", uri, MaxArtifactValue)
	}
	b, err := os.ReadFile(dest)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// writeFile writes a value to the file at dest, creating its directory.
func writeFile(dest, val string) error {
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dest, []byte(val), 0o644)
}

// writeParamFiles writes the value of each input parameter read through
// {{inputs.NAME.path}} to ws.InputPath(NAME) and records the path in v.
func writeParamFiles(c *components.Program, ws Workspace, v components.Placeholders) error {
	for _, name := range c.ParamPathInputs() {
		val, ok := v.Params[name]
		if !ok {
			continue // an optional input left out: its elements are dropped
		}
		dest := ws.InputPath(name)
		if err := writeFile(dest, val); err != nil {
			return fmt.Errorf("input %q: %w", name, err)
		}
		v.InputPaths[name] = dest
	}
	return nil
}

// ForRank returns v with output paths under the rank's output directory,
// created empty (a previous attempt's files are removed).
func (rt *Runtime) ForRank(inv *components.Invocation, ws Workspace, v components.Placeholders, rank int) (components.Placeholders, error) {
	dir := ws.OutputDir(rank)
	if err := os.RemoveAll(dir); err != nil {
		return v, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return v, err
	}
	v.OutputPaths = map[string]string{}
	v.OutputURIs = map[string]string{}
	v.OutputDir = dir
	for _, out := range inv.Component.Outputs {
		v.OutputPaths[out.Name] = out.FilePath(ws.OutputDir(rank))
		if out.Path != "" {
			// A fixed output path belongs to the step: cleared before each
			// attempt like the output directory.
			if err := os.RemoveAll(out.Path); err != nil {
				return v, fmt.Errorf("output %q: %w", out.Name, err)
			}
			if err := os.MkdirAll(filepath.Dir(out.Path), 0o755); err != nil {
				return v, fmt.Errorf("output %q: %w", out.Name, err)
			}
		}
		if components.IsArtifact(out.Type) {
			v.OutputURIs[out.Name] = rt.Store.URI(inv.OutputKey(out.Name))
		}
	}
	return v, nil
}

// MissingOutputError names the declared outputs a program never wrote.
type MissingOutputError struct {
	Outputs []string
}

func (e *MissingOutputError) Error() string {
	return fmt.Sprintf("the program exited 0 but never wrote its declared output(s) %s", strings.Join(e.Outputs, ", "))
}

// PublishError is a program that exited 0 whose outputs could not all be
// stored: the step fails after its program succeeded.
type PublishError struct {
	Err error
}

func (e *PublishError) Error() string { return "program exited 0; " + e.Err.Error() }
func (e *PublishError) Unwrap() error { return e.Err }

// MaxOutputParamSize bounds the file an output parameter's value is read from.
const MaxOutputParamSize = 1 << 20

// Publish stores the outputs rank 0 wrote in ws: artifacts with their
// metadata, parameters read, type-checked and recorded by value; then,
// when every output was published, the step's outputs record
// (recordstore.WriteOutputs), which it returns. The step's outputs appear
// all at once or not at all: when any output fails (a full disk, a store
// error, a bad parameter), Publish deletes, best effort, what it already
// stored and any earlier outputs record of the step, and returns the
// error naming each failed output.
func (rt *Runtime) Publish(ctx context.Context, inv *components.Invocation, ws Workspace) (_ []record.OutputRecord, err error) {
	c := inv.Component
	if err := c.ApplyExecutorOutput(ws.OutputDir(0)); err != nil {
		return nil, &PublishError{Err: err}
	}
	var missing []string
	for _, out := range c.Outputs {
		if _, err := os.Stat(out.FilePath(ws.OutputDir(0))); err != nil {
			missing = append(missing, out.Name)
		}
	}
	if len(missing) > 0 {
		return nil, &MissingOutputError{Outputs: missing}
	}
	var records []record.OutputRecord
	var errs []error
	published := map[string]artifacts.Metadata{} // artifact key → what Publish stored there
	defer func() {
		if err == nil {
			return
		}
		// Undo this attempt. The outputs record goes too: an earlier
		// attempt's would name objects this one has overwritten.
		undo := []error{artifacts.DeleteKeys(ctx, rt.Store, record.OutputsKey(inv.Run, inv.Step))}
		for key, meta := range published {
			undo = append(undo, artifacts.Unpublish(ctx, rt.Store, key, meta))
		}
		err = errors.Join(append([]error{err}, undo...)...)
	}()
	for _, out := range c.Outputs {
		local := out.FilePath(ws.OutputDir(0))
		if !components.IsArtifact(out.Type) {
			b, err := regular.Read(local, MaxOutputParamSize)
			if err != nil {
				errs = append(errs, fmt.Errorf("output %q: %w", out.Name, err))
				continue
			}
			val := strings.TrimRight(string(b), "\r\n")
			if err := components.CheckValue(out.Type, val); err != nil {
				errs = append(errs, fmt.Errorf("output parameter %q: %v", out.Name, err))
				continue
			}
			records = append(records, record.OutputRecord{Name: out.Name, Type: out.Type, Value: &val})
			continue
		}
		key := inv.OutputKey(out.Name)
		meta, err := artifacts.Publish(ctx, rt.Store, key, local, artifacts.Metadata{
			Type:     out.Type,
			Producer: artifacts.Producer{Run: inv.Run, Step: inv.Step, Output: out.Name},
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("publish output %q: %w", out.Name, err))
			continue
		}
		published[key] = meta
		records = append(records, record.OutputRecord{Name: out.Name, Type: out.Type, URI: rt.Store.URI(key), Size: meta.Size, SHA256: meta.SHA256})
	}
	if len(errs) > 0 {
		return nil, &PublishError{Err: errors.Join(errs...)}
	}
	if err := recordstore.WriteOutputs(ctx, rt.Store, inv.Run, inv.Step, records); err != nil {
		return nil, &PublishError{Err: fmt.Errorf("write the outputs record: %w", err)}
	}
	return records, nil
}

// Options say where and how an invocation's program runs.
type Options struct {
	// Dir is the working directory ("" for the current one).
	Dir string
	// Env is the base environment; the component's env is appended.
	Env []string
	// Stdout and Stderr receive the program's output.
	Stdout, Stderr io.Writer
	// GracePeriod is the time between SIGTERM and SIGKILL when ctx ends.
	GracePeriod time.Duration
	// Timing, when set, is told when the program started and ended and
	// when its outputs were published.
	Timing *record.StepTiming
}

// RunOnce runs the program once as the only process (rank 0) of a prepared
// invocation and, when it exits 0, publishes its outputs. This is the path
// of `pipectl exec` in a pod and of every non-distributed local step.
func (rt *Runtime) RunOnce(ctx context.Context, inv *components.Invocation, ws Workspace, v components.Placeholders, o Options) ([]record.OutputRecord, error) {
	rv, err := rt.ForRank(inv, ws, v, 0)
	if err != nil {
		return nil, err
	}
	argv, err := inv.Component.Argv(rv)
	if err != nil {
		return nil, err
	}
	env, err := inv.Component.Environ(rv)
	if err != nil {
		return nil, err
	}
	p := process.Process{Argv: argv, Dir: o.Dir, Env: append(append([]string{}, o.Env...), env...), Stdout: o.Stdout, Stderr: o.Stderr}
	o.stamp(func(t *record.StepTiming) { t.ProgramStarted = time.Now() })
	err = process.Run(ctx, p, o.GracePeriod)
	o.stamp(func(t *record.StepTiming) { t.ProgramEnded = time.Now() })
	if err != nil {
		return nil, err
	}
	records, err := rt.Publish(ctx, inv, ws)
	if err == nil {
		o.stamp(func(t *record.StepTiming) { t.OutputsPublished = time.Now() })
	}
	return records, err
}

func (o Options) stamp(f func(*record.StepTiming)) {
	if o.Timing != nil {
		f(o.Timing)
	}
}
