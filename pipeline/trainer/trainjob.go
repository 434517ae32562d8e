package trainer

import (
	"gopkg.in/yaml.v3"
)

// KueueQueueLabel is the label of a TrainJob naming the Kueue LocalQueue
// that admits it.
const KueueQueueLabel = "kueue.x-k8s.io/queue-name"

// TrainJob is one TrainJob: a run of a runtime.
type TrainJob struct {
	Name string
	// File and Root locate it.
	File string
	Root *yaml.Node
	// RuntimeKind (ClusterTrainingRuntime unless it says, as Trainer has it) and
	// RuntimeName are its runtimeRef; RuntimeNode is the node of its name.
	RuntimeKind, RuntimeName string
	RuntimeNode              *yaml.Node
	// Trainer holds spec.trainer: image, command, args, env and
	// resourcesPerNode (Requests, Limits); NumNodes and ProcsPerNode are 0
	// when not set. TrainerNode is spec.trainer's node.
	Trainer                Pod
	NumNodes, ProcsPerNode int
	TrainerNode            *yaml.Node
	// Patch is what its runtimePatches set on the trainer pod.
	Patch Pod
	// Queue is the Kueue LocalQueue (the kueue.x-k8s.io/queue-name label).
	Queue string
	// Refused are the fields pipectl cannot honour; Warnings those it ignores.
	Refused  []error
	Warnings []string
}

// ParseTrainJob reads root, a TrainJob document of file.
func ParseTrainJob(file string, root *yaml.Node) (*TrainJob, error) {
	w := &walker{file: file}
	j := &TrainJob{File: file, Root: root}
	w.fields(root, "", map[string]func(k, v *yaml.Node, field string){
		"apiVersion": skip,
		"kind":       skip,
		"metadata": func(_, v *yaml.Node, field string) {
			j.Name = w.metadata(v, field, func(l map[string]string) { j.Queue = l[KueueQueueLabel] })
		},
		"spec":   func(_, v *yaml.Node, field string) { w.trainJobSpec(v, field, j) },
		"status": skip,
	}, nil)
	if j.Name == "" && len(w.errs) == 0 {
		w.errorf(root, "metadata.name", "missing: the TrainJob's name")
	}
	if j.RuntimeKind == "" {
		j.RuntimeKind = KindClusterRuntime // Trainer's default
	}
	if j.RuntimeName == "" && len(w.errs) == 0 {
		w.errorf(root, "spec.runtimeRef.name", "missing: the runtime the TrainJob runs")
	}
	j.Refused, j.Warnings = w.refused, w.warns
	return j, joinErrs(w.errs)
}

func (w *walker) trainJobSpec(n *yaml.Node, field string, j *TrainJob) {
	w.fields(n, field, map[string]func(k, v *yaml.Node, field string){
		"runtimeRef": func(_, v *yaml.Node, field string) { w.runtimeRef(v, field, j) },
		"trainer":    func(_, v *yaml.Node, field string) { j.TrainerNode = v; w.trainer(v, field, j) },
		"initializer": func(k, _ *yaml.Node, field string) {
			w.refuse(k, field, "pipectl does not run Trainer's initializers: download the dataset or model in a step "+
				"before the training step of a pipeline (or give it as an input: an s3:// artifact), and run the training there")
		},
		"runtimePatches": func(_, v *yaml.Node, field string) {
			w.list(v, field, func(_ int, p *yaml.Node, field string) { w.runtimePatch(p, field, j) })
		},
		"suspend": func(k, v *yaml.Node, field string) {
			if v.Value == "true" && j.Queue == "" {
				w.warn(k, field, "ignored: pipectl starts the job (with the %s label, Kueue admits it)", KueueQueueLabel)
			}
		},
		"activeDeadlineSeconds": func(k, _ *yaml.Node, field string) {
			w.refuse(k, field, "not supported by pipectl: in a pipeline, give the step a timeout")
		},
		"managedBy": func(k, _ *yaml.Node, field string) {
			w.refuse(k, field, "not supported by pipectl: pipectl runs the job itself (for Kueue, label it %s)", KueueQueueLabel)
		},
	}, nil)
}

func (w *walker) runtimeRef(n *yaml.Node, field string, j *TrainJob) {
	w.fields(n, field, map[string]func(k, v *yaml.Node, field string){
		"name": func(_, v *yaml.Node, field string) { j.RuntimeName, j.RuntimeNode = w.str(v, field), v },
		"apiGroup": func(_, v *yaml.Node, field string) {
			if g := w.str(v, field); g != "" && g != "trainer.kubeflow.org" {
				w.errorf(v, field, "expected trainer.kubeflow.org, got %q", g)
			}
		},
		"kind": func(_, v *yaml.Node, field string) {
			j.RuntimeKind = w.str(v, field)
			if j.RuntimeKind != KindClusterRuntime && j.RuntimeKind != KindRuntime {
				w.errorf(v, field, "expected %s or %s, got %q", KindClusterRuntime, KindRuntime, j.RuntimeKind)
			}
		},
	}, nil)
}

func (w *walker) trainer(n *yaml.Node, field string, j *TrainJob) {
	p := &j.Trainer
	w.fields(n, field, map[string]func(k, v *yaml.Node, field string){
		"image":   func(_, v *yaml.Node, field string) { p.Image = w.str(v, field) },
		"command": func(_, v *yaml.Node, field string) { p.Command = w.strings(v, field) },
		"args":    func(_, v *yaml.Node, field string) { p.Args = w.strings(v, field) },
		"env":     func(_, v *yaml.Node, field string) { p.Env = w.env(v, field) },
		"numNodes": func(_, v *yaml.Node, field string) {
			j.NumNodes = w.count(v, field)
		},
		"numProcPerNode": func(_, v *yaml.Node, field string) { j.ProcsPerNode = w.procs(v, field) },
		"resourcesPerNode": func(_, v *yaml.Node, field string) {
			p.Requests, p.Limits = w.resources(v, field)
		},
	}, nil)
}

// runtimePatch reads one runtimePatches item: the trainer pod's fields
// it sets, on top of the runtime's.
func (w *walker) runtimePatch(n *yaml.Node, field string, j *TrainJob) {
	w.fields(n, field, map[string]func(k, v *yaml.Node, field string){
		"manager": skip,
		"time":    skip,
		"trainingRuntimeSpec": func(_, v *yaml.Node, field string) {
			w.fields(v, field, map[string]func(k, v *yaml.Node, field string){
				"template": func(_, v *yaml.Node, field string) {
					w.fields(v, field, map[string]func(k, v *yaml.Node, field string){
						"metadata": w.ignore("the JobSet's labels and annotations: pipectl's JobSet carries its own"),
						"spec": func(_, v *yaml.Node, field string) {
							w.fields(v, field, map[string]func(k, v *yaml.Node, field string){
								"replicatedJobs": func(_, v *yaml.Node, field string) { w.patchJobs(v, field, j) },
							}, nil)
						},
					}, nil)
				},
			}, nil)
		},
	}, nil)
}

func (w *walker) patchJobs(n *yaml.Node, field string, j *TrainJob) {
	w.list(n, field, func(_ int, job *yaml.Node, field string) {
		name, _, _ := lookup(job, "name")
		if name == nil || name.Value != "node" {
			w.refuse(job, field, "pipectl runs only the trainer job (node): a patch of another job is not supported")
			return
		}
		var patch Pod
		w.replicatedJob(job, field, &patch, false)
		j.Patch = Overlay(j.Patch, patch)
	})
}

// Overlay returns base with the fields over sets replacing base's; maps
// (nodeSelector, resources) and env merge, over's entries winning.
func Overlay(base, over Pod) Pod {
	out := base
	if over.Image != "" {
		out.Image = over.Image
	}
	if over.Command != nil {
		out.Command = over.Command
	}
	if over.Args != nil {
		out.Args = over.Args
	}
	out.Env = MergeEnv(base.Env, over.Env)
	out.Requests = mergeMap(base.Requests, over.Requests)
	out.Limits = mergeMap(base.Limits, over.Limits)
	out.NodeSelector = mergeMap(base.NodeSelector, over.NodeSelector)
	if over.Tolerations != nil {
		out.Tolerations = over.Tolerations
	}
	if over.Affinity != nil {
		out.Affinity = over.Affinity
	}
	if over.PriorityClass != "" {
		out.PriorityClass = over.PriorityClass
	}
	return out
}

// MergeEnv is base's variables then over's: one of over's replaces
// base's of the same name, in place.
func MergeEnv(base, over []EnvVar) []EnvVar {
	if over == nil {
		return base
	}
	out := append([]EnvVar(nil), base...)
	for _, v := range over {
		replaced := false
		for i := range out {
			if out[i].Name == v.Name {
				out[i], replaced = v, true
			}
		}
		if !replaced {
			out = append(out, v)
		}
	}
	return out
}

func mergeMap(base, over map[string]string) map[string]string {
	if over == nil {
		return base
	}
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}
