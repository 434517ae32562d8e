// Package execution runs one invocation of a component (a
// components.Invocation: the step's program with one execution's values)
// against an artifact store: Prepare fetches its input artifacts (and a
// shipped code pack) into a Workspace and resolves its parameters; RunOnce
// runs the program as the only process; Publish stores the outputs all at
// once or not at all. Exec is `pipectl exec`'s path: Prepare, RunOnce and
// the output parameter files of the workflow engine. A gang's ranks
// (pipeline/gang) prepare once and give each rank its own output paths
// (ForRank). The programs run under package components/process; the spec,
// the program and its placeholders are package components'.
package execution
