// Package artifacts is pipectl's artifact store: where step outputs, their
// metadata and run records live.
//
// A store is a flat object store addressed by slash-separated keys below a root
// URI (file:///path or s3://bucket/prefix). The layout is the same everywhere:
//
//	<root>/<run-id>/run.json                      the run record
//	<root>/<run-id>/journal/<seq>.json            a running run's step changes (JournalEntry)
//	<root>/<run-id>/journal/heartbeat             a running run's heartbeat (empty; rewritten every minute)
//	<root>/<run-id>/<step>/<output>               a file output, or
//	<root>/<run-id>/<step>/<output>/<file>...     a directory output, one object per file
//	<root>/<run-id>/<step>/<output>.meta.json     the output's metadata, written last
//	<root>/<run-id>/<step>/outputs.json           the step's outputs record, written last
//	<root>/<run-id>/<step>/step.log               the step's log
//	<root>/.cache/<fingerprint>.json              the step cache index (package stepcache)
//
// The outputs record (StepOutputs, at OutputsKey) is written once by whoever
// published the step's outputs (the component runtime: a local step, `pipectl
// exec` in a pod, rank 0 of a distributed step), after every output and its
// metadata, and only when all of them were published:
//
//	{"run": "<run-id>", "step": "<step>", "outputs": [
//	  {"name": "model", "type": "Model", "uri": "s3://…/<run-id>/train/model", "size": 1234, "sha256": "…"},
//	  {"name": "loss", "type": "float", "value": "0.25"}]}
//
// Each output carries its declared type; a parameter carries its value as
// the run record shows it. A reused step's record names the earlier step's
// outputs and adds "cachedFrom": "<earlier run-id>" (written by whoever
// reused them; nothing is copied). Readers (the launcher,
// the Argo follower, `pipectl runs get`, `pipectl artifacts ls`) take a
// step's outputs and their types from it rather than listing the store.
//
// Output names are DNS-1123 labels, so they never contain a dot and never
// collide with the metadata and log objects. Step names are labels, or labels
// joined by dots for the steps of a nested pipeline (OUTER.INNER); the loader
// refuses the two that would collide with a run's own objects: a step named
// journal, and one whose name is or starts with run.json.
//
// A local run writes its record when it starts (every step Pending) and when
// it ends; in between, each batch of step changes is one journal entry
// {"seq": N, "steps": [<step record>...]}, numbered from 1 (10 digits), so a
// change costs a write of its own size however many steps the run has.
// ReadRun applies the entries numbered above the record's "journal" field;
// the final record holds them all and the entries are then deleted. The
// record's "runner" ({"host", "pid", "start"}) lets a reader on the same host
// see that the runner died: such a run reads as Failed, "runner died". A
// reader on another host goes by the heartbeat, an empty object the runner
// rewrites every minute (HeartbeatInterval) while the run runs and deletes
// with the journal: one older than ten minutes (HeartbeatStale) means the
// runner died, and the run reads as Failed too.
package artifacts
