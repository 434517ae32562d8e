package execution

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/checkpoint"
)

// Request is one `pipectl exec`: an invocation and where and how its
// program runs.
type Request struct {
	// Invocation is the step's invocation (see plan.Wiring.Invocation).
	Invocation *components.Invocation
	// WorkDir holds the fetched inputs and the outputs; it must exist.
	WorkDir string
	// OutputParams, when set, is the directory where each output parameter's
	// value is written, in the encoding of wire.EncodeValue, as a file named after
	// the output (where Argo reads output parameters from).
	OutputParams string
	// Env is the base environment of the program (os.Environ() when nil).
	Env []string
	// Stdout and Stderr receive the program's output.
	Stdout, Stderr io.Writer
	// GracePeriod is the time between SIGTERM and SIGKILL when ctx ends.
	GracePeriod time.Duration
	// Checkpoint is how a distributed step's checkpoint directory is kept
	// (a rank pod's: exec's --checkpoint-keep, --checkpoint-every and
	// --resume-from).
	Checkpoint checkpoint.Options
}

// PodName is the value of {{pod.name}} for the request: $POD_NAME in Env
// (the process's when nil), else the host name.
func (req Request) PodName() string {
	env := req.Env
	if env == nil {
		env = os.Environ()
	}
	for _, kv := range slices.Backward(env) {
		if v, ok := strings.CutPrefix(kv, wire.EnvPodName+"="); ok && v != "" {
			return v
		}
	}
	h, _ := os.Hostname()
	return h
}

// Exec runs one invocation the way the local runner runs a step (Prepare,
// then RunOnce) and writes the output parameters for the workflow engine.
// The error is an *ExitError when the program failed, a
// *MissingOutputError when it did not write a declared output.
func (rt *Runtime) Exec(ctx context.Context, req Request) ([]record.OutputRecord, error) {
	inv := req.Invocation
	if inv.Pod == "" {
		inv.Pod = req.PodName()
	}
	ws := Workspace{Dir: req.WorkDir}
	values, err := rt.Prepare(ctx, inv, ws)
	if err != nil {
		return nil, err
	}
	records, err := rt.RunOnce(ctx, inv, ws, values, Options{
		Dir: inv.Component.RunDir(), Env: inv.Environ(req.Env), Stdout: req.Stdout, Stderr: req.Stderr, GracePeriod: req.GracePeriod,
	})
	if err != nil {
		return nil, err
	}
	if req.OutputParams != "" {
		if err := WriteOutputParams(req.OutputParams, records); err != nil {
			return records, err
		}
	}
	return records, nil
}

// WriteOutputParams writes the value of every parameter output in records
// to dir/<name>, encoded with wire.EncodeValue, with no trailing newline.
func WriteOutputParams(dir string, records []record.OutputRecord) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, r := range records {
		if r.Value == nil {
			continue
		}
		tmp, err := os.CreateTemp(dir, "."+r.Name+".tmp-*")
		if err != nil {
			return err
		}
		_, err = tmp.WriteString(wire.EncodeValue(*r.Value))
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), filepath.Join(dir, r.Name))
		}
		if err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("output parameter %q: %w", r.Name, err)
		}
	}
	return nil
}
