package rankenv

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Torchrun is a torchrun command line (torchrun ARGS, or python -m
// torch.distributed.run ARGS) read as torchrun reads it, so that a local
// gang can start the worker processes itself, one per rank with its RANK
// and LOCAL_RANK, instead of running torchrun (see Worker). In a rank pod
// the image's torchrun runs as written.
type Torchrun struct {
	// Python runs the training script (the interpreter of python -m
	// torch.distributed.run; python3 for torchrun).
	Python string
	// Script and Args are the training script (a module with Module, a
	// program with NoPython) and its arguments, as written.
	Script           string
	Args             []string
	Module, NoPython bool
	// NNodes and NProcPerNode are the --nnodes and --nproc-per-node
	// values as written ("" when not given).
	NNodes, NProcPerNode string
}

// torchrunFlags are torchrun's options without a value; torchrunOptions
// those with one (names with - for _: torchrun takes both spellings).
var (
	torchrunFlags   = map[string]bool{"--standalone": true, "--no-python": true, "-m": true, "--module": true, "--run-path": true}
	torchrunOptions = map[string]bool{
		"--nnodes": true, "--nproc-per-node": true, "--node-rank": true, "--master-addr": true, "--master-port": true,
		"--rdzv-backend": true, "--rdzv-endpoint": true, "--rdzv-id": true, "--rdzv-conf": true,
		"--max-restarts": true, "--monitor-interval": true, "--start-method": true, "--role": true,
		"--local-addr": true, "--log-dir": true, "-r": true, "--redirects": true, "-t": true, "--tee": true,
		"--local-ranks-filter": true, "--logs-specs": true, "--event-log-handler": true, "--signals-to-handle": true,
	}
)

// ParseTorchrun reads argv, a command IsTorchrun reports on.
func ParseTorchrun(argv []string) (*Torchrun, error) {
	if !IsTorchrun(argv) {
		return nil, fmt.Errorf("not a torchrun command: %q", argv)
	}
	tr := &Torchrun{Python: "python3"}
	args := argv[1:]
	if filepath.Base(argv[0]) != "torchrun" {
		tr.Python = argv[0]
		for i, a := range args {
			if a == "-m" {
				args = args[i+2:]
				break
			}
		}
	}
	for len(args) > 0 {
		a := args[0]
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		args = args[1:]
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(a, "=")
		if strings.HasPrefix(name, "--") {
			name = "--" + strings.ReplaceAll(name[2:], "_", "-")
		}
		switch {
		case torchrunFlags[name] && !hasValue:
			switch name {
			case "--no-python":
				tr.NoPython = true
			case "-m", "--module":
				tr.Module = true
			case "--run-path":
				return nil, fmt.Errorf("torchrun %s: pipectl's local torchrun does not run a script by path (runpy); name the script or a module", name)
			}
		case torchrunOptions[name]:
			if !hasValue {
				if len(args) == 0 {
					return nil, fmt.Errorf("torchrun %s: missing its value", name)
				}
				value, args = args[0], args[1:]
			}
			switch name {
			case "--nnodes":
				tr.NNodes = value
			case "--nproc-per-node":
				tr.NProcPerNode = value
			}
		default:
			return nil, fmt.Errorf("torchrun %s: not an option pipectl's local torchrun knows (it knows torchrun's of PyTorch 2)", a)
		}
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("torchrun: missing the training script (torchrun [OPTIONS] SCRIPT [ARGS...])")
	}
	if tr.Module && tr.NoPython {
		return nil, fmt.Errorf("torchrun: --no-python and -m/--module do not go together")
	}
	tr.Script, tr.Args = args[0], args[1:]
	return tr, nil
}

// Check reports whether the command's --nnodes and --nproc-per-node agree
// with the gang's shape t (torchrun would otherwise run another one); a
// ProcsPerNode of 0 (not known yet) takes any --nproc-per-node.
func (tr *Torchrun) Check(t Topology) error {
	if tr.NNodes != "" {
		lo, hi, elastic := strings.Cut(tr.NNodes, ":")
		mn, err1 := strconv.Atoi(lo)
		mx, err2 := mn, error(nil)
		if elastic {
			mx, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || t.Nodes < mn || t.Nodes > mx {
			return fmt.Errorf("torchrun --nnodes %s: the step has %d nodes (distributed.nodes); leave --nnodes out, pipectl gives torchrun the step's", tr.NNodes, t.Nodes)
		}
	}
	switch tr.NProcPerNode {
	case "", "auto", "cpu", "gpu":
		return nil
	}
	n, err := strconv.Atoi(tr.NProcPerNode)
	if err != nil || n < 1 {
		return fmt.Errorf("torchrun --nproc-per-node %s: expected a count, auto, cpu or gpu", tr.NProcPerNode)
	}
	if t.ProcsPerNode > 0 && n != t.ProcsPerNode {
		return fmt.Errorf("torchrun --nproc-per-node %s: the step has %d processes per node (distributed.procsPerNode); set that instead", tr.NProcPerNode, t.ProcsPerNode)
	}
	return nil
}

// TorchrunWorker is the worker process that torchrun command argv starts
// on each rank of a gang of shape t: ParseTorchrun, Check and Worker.
func TorchrunWorker(argv []string, t Topology) ([]string, error) {
	tr, err := ParseTorchrun(argv)
	if err == nil {
		err = tr.Check(t)
	}
	if err != nil {
		return nil, err
	}
	return tr.Worker(), nil
}

// Worker is the argv of one worker process, what torchrun would start.
func (tr *Torchrun) Worker() []string {
	var argv []string
	switch {
	case tr.NoPython:
		argv = []string{tr.Script}
	case tr.Module:
		argv = []string{tr.Python, "-u", "-m", tr.Script}
	default:
		argv = []string{tr.Python, "-u", tr.Script}
	}
	return append(argv, tr.Args...)
}

// WorkerEnv is what torchrun gives each worker besides the rank
// environment (RankEnv): its group and role ranks and restart count.
func (t Topology) WorkerEnv(node, local, restart int) []string {
	return []string{
		"GROUP_RANK=" + strconv.Itoa(node), "GROUP_WORLD_SIZE=" + strconv.Itoa(t.Nodes),
		"ROLE_NAME=default", "ROLE_RANK=" + strconv.Itoa(node*t.ProcsPerNode+local), "ROLE_WORLD_SIZE=" + strconv.Itoa(t.WorldSize()),
		"TORCHELASTIC_RESTART_COUNT=" + strconv.Itoa(restart),
	}
}
