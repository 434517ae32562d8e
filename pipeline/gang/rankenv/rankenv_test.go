package rankenv

import (
	"strings"
	"testing"
)

func TestNodeFromEnv(t *testing.T) {
	env := map[string]string{"NNODES": "4", "LOCAL_WORLD_SIZE": "2", "NODE_RANK": "3", "MASTER_ADDR": "a", "MASTER_PORT": "29500"}
	n, err := NodeFromEnv(func(k string) string { return env[k] })
	if err != nil || n.Index != 3 || n.Nodes != 4 || n.ProcsPerNode != 2 || n.MasterAddr != "a" {
		t.Fatalf("NodeFromEnv = %+v, %v", n, err)
	}
	env["NODE_RANK"] = "4"
	if _, err := NodeFromEnv(func(k string) string { return env[k] }); err == nil {
		t.Error("NODE_RANK 4 of 4 nodes accepted")
	}
}

func TestIsTorchrun(t *testing.T) {
	for argv, want := range map[string]bool{
		"torchrun train.py":                             true,
		"/usr/bin/torchrun --nproc_per_node 2 train.py": true,
		"python3 -m torch.distributed.run train.py":     true,
		"python3 train.py":                              false,
		"python3 -m pytest":                             false,
		"torchrunner x":                                 false,
	} {
		if got := IsTorchrun(strings.Fields(argv)); got != want {
			t.Errorf("IsTorchrun(%q) = %v", argv, got)
		}
	}
}
