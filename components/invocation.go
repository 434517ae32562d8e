package components

import (
	"encoding/json"
	"os"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
)

// Invocation is one execution of a component: everything the runtime needs
// to fetch inputs, build argv, and publish outputs. It is what `pipectl exec`
// receives in a pod, and what the local runner builds for each step.
type Invocation struct {
	// Component is the program and its declared inputs and outputs.
	Component *Program `json:"component"`
	// Image is the container image the program runs in on Kubernetes (""
	// for a step with none); the fingerprint holds it.
	Image string `json:"image,omitempty"`
	// Run and Step name the run and step the outputs belong to.
	Run  string `json:"run"`
	Step string `json:"step"`
	// Params are the values of input parameters, canonical. Inputs left out
	// take their default.
	Params map[string]string `json:"params,omitempty"`
	// Inputs are the store URIs of input artifacts, by input name.
	Inputs map[string]string `json:"inputs,omitempty"`
	// Collected are the store URIs of the artifacts of every iteration of a
	// loop step, in order, by input name: the input is a directory holding
	// iteration i's artifact as <i>.
	Collected map[string][]string `json:"collected,omitempty"`
	// Metadata are the metadata of input artifacts that have some (KFP's
	// importer metadata), JSON objects by input name: the executor input
	// ({{executor.input}}) gives them; an input not in it has {}.
	Metadata map[string]json.RawMessage `json:"metadata,omitempty"`
	// Env adds NAME=value pairs to the program's environment.
	Env []string `json:"env,omitempty"`
	// Pod is the value of {{pod.name}}: the pod's name on Kubernetes; when
	// empty (a local run), RUN-STEP.
	Pod string `json:"pod,omitempty"`
}

// OutputKey is the store key of an output of the invocation.
func (inv *Invocation) OutputKey(name string) string {
	return record.OutputKey(inv.Run, inv.Step, name)
}

// Environ is the environment of a step's program, locally and in a pod:
// base (the process's when nil), then the invocation's variables, the run
// id and the step.
func (inv *Invocation) Environ(base []string) []string {
	if base == nil {
		base = os.Environ()
	}
	return append(append(append([]string{}, base...), inv.Env...), wire.EnvRunID+"="+inv.Run, wire.EnvStep+"="+inv.Step)
}
