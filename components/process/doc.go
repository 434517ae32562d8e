// Package process supervises the programs pipectl runs: a step's program
// (locally, in a step pod) and a gang's rank processes. Each runs in its
// own process group; Stop sends SIGTERM to the group and SIGKILL after a
// grace period; a Guard (a watchdog outliving pipectl) kills groups left
// behind when pipectl itself dies; ExitOrder tells which of several
// processes exited first (Linux); LineWriter and Tail cut output into
// lines (prefixed, bounded, progress bars folded) and keep the last ones
// for error messages.
//
// It imports nothing of pipectl: the component runtime (package
// components), the step executor (pipeline/step) and the local gang
// (pipeline/gang) use it.
package process
