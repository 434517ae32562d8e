package pipeline

import (
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"pipectl.dev/pipectl/components/yamlfile"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
)

// MinStallTimeout is the shortest distributed.stallTimeout: a gang is
// watched at a fraction of it, and a shorter one would stop healthy ranks
// between two lines.
const MinStallTimeout = time.Second

// MaxCheckpointKeep bounds distributed.checkpoint.keep, and
// MinCheckpointEvery is the shortest distributed.checkpoint.every.
const (
	MaxCheckpointKeep  = 100
	MinCheckpointEvery = time.Second
)

// distributed checks steps[i].distributed: its resources and tolerations,
// a world size in bounds, its restarts, port and shared memory, and its
// gang scheduler.
func (v *validator) distributed(i int, index map[string]int) {
	s := &v.p.Steps[i]
	d := s.Distributed
	if d == nil {
		return
	}
	v.resources(i, v.sp(i, "distributed", "resources"), d.Resources, index)
	v.tolerations(v.sp(i, "distributed", "tolerations"), d.Tolerations)
	nodesOK := d.Nodes >= 1 && d.Nodes <= MaxNodes
	procsOK := d.ProcsPerNode >= 0 && d.ProcsPerNode <= MaxProcsPerNode
	if !nodesOK {
		v.atValue(v.sp(i, "distributed", "nodes"), "expected 1 to %d nodes, got %d", MaxNodes, d.Nodes)
	}
	if !procsOK {
		v.atValue(v.sp(i, "distributed", "procsPerNode"), "expected 1 to %d, got %d", MaxProcsPerNode, d.ProcsPerNode)
	}
	if nodesOK && procsOK && d.Nodes*d.Procs() > MaxWorldSize {
		v.at(v.sp(i, "distributed"), "nodes × procsPerNode = %d × %d = %d ranks: expected at most %d (WORLD_SIZE)", d.Nodes, d.Procs(), d.Nodes*d.Procs(), MaxWorldSize)
	}
	v.framework(i, d)
	v.torchrun(i, d)
	if d.MaxRestarts < 0 || d.MaxRestarts > MaxRetries {
		v.atValue(v.sp(i, "distributed", "maxRestarts"), "expected 0 to %d, got %d", MaxRetries, d.MaxRestarts)
	}
	if path := v.sp(i, "distributed", "stallTimeout"); d.StallTimeout.Duration < MinStallTimeout {
		if n, _, set := yamlfile.Lookup(v.f.Root, path...); set {
			v.atValue(path, "expected a duration of at least %s (or no stallTimeout: no stall detection), got %q", MinStallTimeout, n.Value)
		}
	}
	if c := d.Checkpoint; c != nil {
		path := v.sp(i, "distributed", "checkpoint", "keep")
		if _, _, set := yamlfile.Lookup(v.f.Root, path...); set && (c.Keep < 1 || c.Keep > MaxCheckpointKeep) {
			v.atValue(path, "expected 1 to %d checkpoints kept, got %d", MaxCheckpointKeep, c.Keep)
		}
		if path := v.sp(i, "distributed", "checkpoint", "every"); c.Every.Duration < MinCheckpointEvery {
			if n, _, set := yamlfile.Lookup(v.f.Root, path...); set {
				v.atValue(path, "expected a duration of at least %s, got %q", MinCheckpointEvery, n.Value)
			}
		}
	}
	if d.Port < 0 || d.Port > 65535 {
		v.atValue(v.sp(i, "distributed", "port"), "expected a TCP port (1-65535), got %d", d.Port)
	}
	if d.ShmSize != "" {
		if q, err := resource.ParseQuantity(d.ShmSize); err != nil || q.Sign() <= 0 {
			v.atValue(v.sp(i, "distributed", "shmSize"), "expected a size such as 8Gi or 512Mi, got %q", d.ShmSize)
		}
	}
	if d.Resources != nil && s.Resources != nil {
		v.at(v.sp(i, "distributed", "resources"), "set resources on the step or under distributed, not both")
	}
	v.gang(i, d.Gang)
}

// gang checks steps[i].distributed.gang: one scheduler, each complete.
func (v *validator) gang(i int, g *Gang) {
	if g == nil {
		return
	}
	if g.Kueue != nil && g.PodGroup != nil {
		v.at(v.sp(i, "distributed", "gang"), "choose one of kueue and podGroup")
	}
	if g.Kueue != nil && g.Kueue.Queue == "" {
		v.at(v.sp(i, "distributed", "gang", "kueue"), "missing: queue (the LocalQueue's name)")
	}
	if g.PodGroup != nil && !slices.Contains(PodGroupSchedulers, g.PodGroup.Scheduler) {
		v.atValue(v.sp(i, "distributed", "gang", "podGroup", "scheduler"), "expected %s, got %q", orList(PodGroupSchedulers), g.PodGroup.Scheduler)
	}
}

// framework checks steps[i].distributed.framework: one rankenv knows, and
// a topology it can run.
func (v *validator) framework(i int, d *Distributed) {
	f, err := rankenv.ParseFramework(d.Framework)
	if err != nil {
		v.atValue(v.sp(i, "distributed", "framework"), "%v", err)
		return
	}
	if f == rankenv.JAX && d.ProcsPerNode > 1 {
		v.atValue(v.sp(i, "distributed", "procsPerNode"), "framework jax runs one process per node (it drives every device of its node): expected 1, got %d", d.ProcsPerNode)
	}
}

// torchrun checks the torchrun command of steps[i] (torch), whose options a
// local gang reads as torchrun does (rankenv.ParseTorchrun): options it
// knows, and a shape the step's. Options with placeholders are checked
// when the step runs.
func (v *validator) torchrun(i int, d *Distributed) {
	c := v.p.Steps[i].Resolved
	if c == nil || (d.Framework != "" && d.Framework != string(rankenv.Torch)) {
		return
	}
	argv := slices.Concat(c.Command, c.Args)
	if !rankenv.IsTorchrun(argv) || slices.ContainsFunc(argv, func(a string) bool { return strings.Contains(a, "{{") }) {
		return
	}
	if _, err := rankenv.TorchrunWorker(argv, rankenv.Topology{Nodes: d.Nodes, ProcsPerNode: d.ProcsPerNode}); err != nil {
		v.at(v.sp(i, "component", "command"), "%v", err) // the component's line when it is a file
	}
}
