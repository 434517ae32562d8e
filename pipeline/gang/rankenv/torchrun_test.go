package rankenv

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseTorchrun: torchrun's command lines as torchrun reads them (both
// spellings of its options, --opt=value, python -m torch.distributed.run)
// give the worker torchrun would start; what it cannot run is an error.
func TestParseTorchrun(t *testing.T) {
	for _, tc := range []struct {
		argv   []string
		worker []string
		err    string
	}{
		{[]string{"torchrun", "train.py", "--epochs", "3"}, []string{"python3", "-u", "train.py", "--epochs", "3"}, ""},
		{[]string{"/usr/bin/torchrun", "--nnodes", "1:4", "--nproc_per_node=auto", "--standalone", "-m", "pkg.train", "-x"}, []string{"python3", "-u", "-m", "pkg.train", "-x"}, ""},
		{[]string{"torchrun", "--no-python", "python3", "-c", "print(1)"}, []string{"python3", "-c", "print(1)"}, ""},
		{[]string{"python3.11", "-m", "torch.distributed.run", "--rdzv_endpoint", "h:1", "t.py"}, []string{"python3.11", "-u", "t.py"}, ""},
		{[]string{"torchrun", "--", "t.py", "--nnodes", "9"}, []string{"python3", "-u", "t.py", "--nnodes", "9"}, ""},
		{[]string{"torchrun", "--nnodes", "3", "t.py"}, nil, "torchrun --nnodes 3: the step has 2 nodes"},
		{[]string{"torchrun", "--nproc-per-node", "two", "t.py"}, nil, "expected a count, auto, cpu or gpu"},
		{[]string{"torchrun", "--bogus", "t.py"}, nil, "torchrun --bogus: not an option"},
		{[]string{"torchrun", "--run-path", "t.py"}, nil, "does not run a script by path"},
		{[]string{"torchrun", "--nnodes"}, nil, "missing its value"},
		{[]string{"torchrun", "--standalone"}, nil, "missing the training script"},
		{[]string{"torchrun", "-m", "--no-python", "x"}, nil, "do not go together"},
	} {
		tr, err := ParseTorchrun(tc.argv)
		if err == nil {
			err = tr.Check(Topology{Nodes: 2, ProcsPerNode: 1})
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.argv, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.argv, err)
			continue
		}
		if diff := cmp.Diff(tc.worker, tr.Worker()); diff != "" {
			t.Errorf("%q: worker (-want +got):\n%s", tc.argv, diff)
		}
	}
}
