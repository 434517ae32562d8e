// Package stepcache is the step cache both backends use: a step whose
// fingerprint matches a step that succeeded earlier in the same store is
// not run again; its outputs are those of the earlier step.
//
// # Fingerprint
//
// Fingerprint is the sha256 (hex) of a JSON document of what decides a
// step's work:
//
//	{"component": the component as the runtime runs it, image and "code"
//	          included: the digest of the component's folder as it is
//	          shipped with a cluster run (package codepack), the same on
//	          both backends, so any edit in the folder re-runs its steps,
//	 "files": {ARG: sha256}, for a component whose code is not shipped (KFP
//	          v1: its image holds it), for each argument of its command that
//	          names a regular file in the component's directory (locally
//	          only: in a pod the component has no directory),
//	 "params": the resolved input parameter values (defaults applied),
//	 "inputs": {INPUT: sha256} of each input artifact,
//	 "env": the step's env, "nodes"?, "procs"?: the gang shape}
//
// The image is part of it, so a local run's entries and a cluster run's mix
// only when the component names the same image.
// The gang shape is the one the step runs with: locally procsPerNode as
// written (or 1), on Kubernetes as written, else the GPUs per rank pod.
//
// # Store layout
//
//	<root>/.cache/<fingerprint>.json   Entry: {"run", "step", "created", "outputs": [OutputRecord...]}
//
// An entry is written once its step succeeded and published its outputs
// record. Lookup uses an entry only when every artifact it names is still in
// the store: its metadata with the same sha256, and each of its objects with
// the size the metadata records (a run removed by gc, an object deleted or
// republished, makes a miss, never a wrong hit). Lookup reads no artifact's
// bytes; whoever downloads one verifies them against the sha256.
//
// # Reuse
//
// A reused step writes its own outputs record (<run>/<step>/outputs.json,
// record.StepOutputs) naming the earlier step's outputs, by their URIs,
// with "cachedFrom" set to the earlier run: nothing is copied. Readers of
// input artifacts therefore take a producer's URI from its outputs record
// (Inputs), not from the run's own prefix.
//
// # Modes
//
// On the cluster `pipectl exec` and `pipectl launch` take --cache MODE (Mode):
// "on" looks the step up and records it, "refresh" (pipectl run --no-cache)
// runs it and records it, "off" (cache: false) does neither.
package stepcache
