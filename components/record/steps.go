package record

import "time"

// OutputsKey is the key of a step's outputs record: the typed records of
// every output the step published, written once by whoever published them.
func OutputsKey(run, step string) string { return run + "/" + step + "/outputs.json" }

// StepOutputs is the outputs record of one step, stored at OutputsKey.
type StepOutputs struct {
	// Run and Step name the step whose outputs these are.
	Run  string `json:"run"`
	Step string `json:"step"`
	// Outputs are the step's outputs in the component's order, each with
	// its declared type: artifacts by URI, size and sha256, parameters by
	// value.
	Outputs []OutputRecord `json:"outputs"`
	// CachedFrom, when set, names the earlier run whose step's outputs
	// these are: the step was reused, not run (see package stepcache).
	CachedFrom string `json:"cachedFrom,omitempty"`
	// Skipped, when set, says why the step (an iteration of a loop step
	// whose condition compares its item) did not run: it has no outputs.
	Skipped string `json:"skipped,omitempty"`
}

// InputsKey is the key of a step's inputs record: the input artifacts the
// step's program read, written by the step executor when the step ran.
func InputsKey(run, step string) string { return run + "/" + step + "/inputs.json" }

// StepInputs is the inputs record of one step, stored at InputsKey.
type StepInputs struct {
	Run  string `json:"run"`
	Step string `json:"step"`
	// Inputs are the input artifacts, by name order: where each was read
	// from and its content's sha256 ("" when it was not computed).
	Inputs []InputRecord `json:"inputs"`
	// Timing, when set, says when a step pod's runtime did what (`pipectl
	// exec`): what a pod spends besides its program, for the benchmarks.
	Timing *StepTiming `json:"timing,omitempty"`
}

// StepTiming is when the runtime of a step pod reached each of its phases,
// its last attempt's where the step was retried in the pod.
type StepTiming struct {
	// ExecStarted is when the runtime started; InputsReady when the
	// inputs and the code were in the workspace.
	ExecStarted time.Time `json:"execStarted,omitzero"`
	InputsReady time.Time `json:"inputsReady,omitzero"`
	// ProgramStarted and ProgramEnded bound the program's process.
	ProgramStarted time.Time `json:"programStarted,omitzero"`
	ProgramEnded   time.Time `json:"programEnded,omitzero"`
	// OutputsPublished is when the outputs and their record were stored.
	OutputsPublished time.Time `json:"outputsPublished,omitzero"`
}

// InputRecord is one input artifact of a step.
type InputRecord struct {
	Name   string `json:"name"`
	URI    string `json:"uri"`
	SHA256 string `json:"sha256,omitempty"`
}

// Consumer is a step that read some content.
type Consumer struct {
	Run  string `json:"run"`
	Step string `json:"step"`
}
