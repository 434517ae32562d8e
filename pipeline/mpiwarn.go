package pipeline

import (
	"path/filepath"
	"strings"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
)

// mpiLaunchers are the programs that start an MPI job's processes from a
// hostfile (a name, or the start of one: mpirun.openmpi, mpiexec.hydra).
var mpiLaunchers = []string{"mpirun", "mpiexec", "orterun", "horovodrun"}

// isMPILauncher reports whether argv starts an MPI job: an MPI launcher,
// or a shell running a script that names one.
func isMPILauncher(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	names := func(s string) bool {
		for _, l := range mpiLaunchers {
			if strings.HasPrefix(s, l) {
				return true
			}
		}
		return false
	}
	switch base := filepath.Base(argv[0]); base {
	case "sh", "bash", "dash", "zsh", "env":
		for _, a := range argv[1:] {
			for _, w := range strings.Fields(a) {
				if names(filepath.Base(w)) {
					return true
				}
			}
		}
		return false
	default:
		return names(base)
	}
}

// mpiCommandWarnings warns of each mpi step whose command is not an MPI
// launcher: it runs once, on node 0, and no process runs on the other
// nodes. Call once the components are resolved.
func (v *validator) mpiCommandWarnings() {
	for i := range v.p.Steps {
		s := &v.p.Steps[i]
		if s.Distributed == nil || s.Distributed.Framework != string(rankenv.MPI) || s.Resolved == nil {
			continue
		}
		argv := append(append([]string{}, s.Resolved.Command...), s.Resolved.Args...)
		if len(argv) == 0 || isMPILauncher(argv) {
			continue
		}
		path := v.sp(i, "distributed", "framework")
		n, _, _ := yamlfile.Lookup(v.f.Root, path...)
		v.p.Warnings = append(v.p.Warnings, v.f.Errorf(n, components.FieldPath(path...),
			"step %s: framework mpi runs the command once, on node 0, and its command %q is not an MPI launcher (mpirun, mpiexec, …): no process will run on the other nodes", s.Name, argv[0]).Error())
	}
}
