package components

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pipectl.dev/pipectl/artifacts"
)

// Environment variables every step's program gets, locally and in a pod.
const (
	EnvRunID = "PIPECTL_RUN_ID"
	EnvStep  = "PIPECTL_STEP"
)

// ExecRequest is one `pipectl exec`: a component, how the step wires it,
// and the run-time values.
type ExecRequest struct {
	Component *ExecComponent
	Step      *ExecStep
	Values    ExecValues
	// Argv, when set, replaces the component's command and args (placeholders
	// are resolved in it all the same).
	Argv []string
	// WorkDir holds the fetched inputs and the outputs; it must exist.
	WorkDir string
	// OutputParams, when set, is the directory where each output parameter's
	// value is written, in the encoding of EncodeValue, as a file named after
	// the output (where Argo reads output parameters from).
	OutputParams string
	// Env is the base environment of the program (os.Environ() when nil).
	Env []string
	// Stdout and Stderr receive the program's output.
	Stdout, Stderr io.Writer
	// GracePeriod is the time between SIGTERM and SIGKILL when ctx ends.
	GracePeriod time.Duration
}

// RunComponent returns the component the request runs: its command and
// args replaced by Argv when that is set.
func (req ExecRequest) RunComponent() (*Component, error) {
	c, err := req.Component.Component()
	if err != nil {
		return nil, err
	}
	if len(req.Argv) > 0 {
		c.Command, c.Args = req.Argv, nil
	}
	return c, nil
}

// Environ is the environment of the request's program: Env (the process's
// when nil), then the invocation's variables, the run id and the step.
func (req ExecRequest) Environ(inv *Invocation) []string {
	base := req.Env
	if base == nil {
		base = os.Environ()
	}
	return append(append(append([]string{}, base...), inv.Env...), EnvRunID+"="+inv.Run, EnvStep+"="+inv.Step)
}

// EnvPodName is the variable that gives `pipectl exec` its pod's name (from
// the downward API); without it the host name stands in, which Kubernetes
// sets to the pod's name.
const EnvPodName = "POD_NAME"

// PodName is the value of {{pod.name}} for the request: $POD_NAME in Env
// (the process's when nil), else the host name.
func (req ExecRequest) PodName() string {
	env := req.Env
	if env == nil {
		env = os.Environ()
	}
	for _, kv := range slices.Backward(env) {
		if v, ok := strings.CutPrefix(kv, EnvPodName+"="); ok && v != "" {
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
func (rt *Runtime) Exec(ctx context.Context, req ExecRequest) ([]artifacts.OutputRecord, error) {
	c, err := req.RunComponent()
	if err != nil {
		return nil, err
	}
	if len(req.Argv) > 0 {
		if _, err := c.checkList(c.Command, true); err != nil {
			return nil, fmt.Errorf("command: %v", err)
		}
	}
	inv, err := req.Step.Invocation(c, rt.Store, req.Values)
	if err != nil {
		return nil, err
	}
	inv.Pod = req.PodName()
	ws := Workspace{Dir: req.WorkDir}
	values, err := rt.Prepare(ctx, inv, ws)
	if err != nil {
		return nil, err
	}
	records, err := rt.RunOnce(ctx, inv, ws, values, ExecOptions{
		Dir: c.WorkingDir, Env: req.Environ(inv), Stdout: req.Stdout, Stderr: req.Stderr, GracePeriod: req.GracePeriod,
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
// to dir/<name>, encoded with EncodeValue, with no trailing newline.
func WriteOutputParams(dir string, records []artifacts.OutputRecord) error {
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
		_, err = tmp.WriteString(EncodeValue(*r.Value))
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
