package trainer

import (
	"reflect"

	"gopkg.in/yaml.v3"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// APIVersion is the apiVersion of Trainer v2's files.
const APIVersion = "trainer.kubeflow.org/v1alpha1"

// The kinds of Trainer's files pipectl reads.
const (
	KindClusterRuntime = "ClusterTrainingRuntime"
	KindRuntime        = "TrainingRuntime"
	KindTrainJob       = "TrainJob"
)

// Frameworks, as a distributed step's framework names them.
const (
	FrameworkTorch   = "torch"
	FrameworkMPI     = "mpi"
	FrameworkJAX     = "jax"
	FrameworkXGBoost = "xgboost"
)

// Runtime is one ClusterTrainingRuntime or TrainingRuntime.
type Runtime struct {
	Kind, Name string
	// File, Line and Column locate its metadata.name.
	File         string
	Line, Column int
	// Framework is the mlPolicy's framework ("" when it names none:
	// Trainer's plain ML policy, no framework environment).
	Framework string
	// NumNodes and ProcsPerNode are mlPolicy's (0: not set).
	NumNodes, ProcsPerNode int
	// Pod is the trainer pod's template.
	Pod Pod
	// PodGroup is the podGroupPolicy's scheduler (coscheduling, volcano)
	// and PodGroupTimeout its scheduleTimeoutSeconds (0: not set).
	PodGroup        string
	PodGroupTimeout int
	// Refused are the fields pipectl cannot honour: a step naming the
	// runtime fails with them. Warnings are the fields it ignores.
	Refused  []error
	Warnings []string
}

// ParseRuntime reads root, a runtime document of file.
func ParseRuntime(file string, root *yaml.Node) (*Runtime, error) {
	w := &walker{file: file}
	r := &Runtime{File: file}
	w.fields(root, "", map[string]func(k, v *yaml.Node, field string){
		"apiVersion": skip,
		"kind":       func(_, v *yaml.Node, _ string) { r.Kind = v.Value },
		"metadata": func(_, v *yaml.Node, field string) {
			r.Name = w.metadata(v, field, nil)
			if n, _, ok := lookup(v, "name"); ok {
				r.Line, r.Column = n.Line, n.Column
			}
		},
		"spec":   func(_, v *yaml.Node, field string) { w.runtimeSpec(v, field, r) },
		"status": skip,
	}, nil)
	if r.Name == "" && len(w.errs) == 0 {
		w.errorf(root, "metadata.name", "missing: the runtime's name")
	}
	r.Refused, r.Warnings = w.refused, w.warns
	return r, joinErrs(w.errs)
}

// metadata reads an object's metadata, returning its name; labels, when
// not nil, gets its labels. Other metadata changes nothing.
func (w *walker) metadata(n *yaml.Node, field string, labels func(map[string]string)) string {
	var name string
	h := map[string]func(k, v *yaml.Node, field string){}
	for _, f := range jsonFields(reflect.TypeOf(metav1.ObjectMeta{})) {
		h[f] = skip
	}
	h["name"] = func(_, v *yaml.Node, field string) { name = w.str(v, field) }
	if labels != nil {
		h["labels"] = func(_, v *yaml.Node, field string) { labels(w.stringMap(v, field)) }
	}
	w.fields(n, field, h, nil)
	return name
}

func (w *walker) runtimeSpec(n *yaml.Node, field string, r *Runtime) {
	w.fields(n, field, map[string]func(k, v *yaml.Node, field string){
		"mlPolicy":       func(_, v *yaml.Node, field string) { w.mlPolicy(v, field, r) },
		"podGroupPolicy": func(_, v *yaml.Node, field string) { w.podGroupPolicy(v, field, r) },
		"template": func(_, v *yaml.Node, field string) {
			w.fields(v, field, map[string]func(k, v *yaml.Node, field string){
				"metadata": skip, // the JobSet's own labels and annotations
				"spec":     func(_, v *yaml.Node, field string) { w.jobSetSpec(v, field, r) },
			}, nil)
		},
	}, nil)
}

func (w *walker) mlPolicy(n *yaml.Node, field string, r *Runtime) {
	set := func(f string) func(k, v *yaml.Node, field string) {
		return func(k, v *yaml.Node, field string) {
			if r.Framework != "" {
				w.errorf(k, field, "mlPolicy names %s already: expected one of torch, mpi, jax, xgboost", r.Framework)
			}
			r.Framework = f
			w.policySource(v, field, f, r)
		}
	}
	w.fields(n, field, map[string]func(k, v *yaml.Node, field string){
		"numNodes": func(_, v *yaml.Node, field string) { r.NumNodes = w.count(v, field) },
		"torch":    set(FrameworkTorch), "mpi": set(FrameworkMPI), "jax": set(FrameworkJAX), "xgboost": set(FrameworkXGBoost),
		"flux": func(k, _ *yaml.Node, field string) {
			w.refuse(k, field, "the Flux framework is not supported by pipectl (expected torch, mpi, jax or xgboost)")
		},
	}, nil)
}

// policySource reads mlPolicy.FRAMEWORK.
func (w *walker) policySource(n *yaml.Node, field, f string, r *Runtime) {
	h := map[string]func(k, v *yaml.Node, field string){}
	switch f {
	case FrameworkTorch:
		h["numProcPerNode"] = func(_, v *yaml.Node, field string) { r.ProcsPerNode = w.procs(v, field) }
		h["envInjection"] = func(k, _ *yaml.Node, field string) {
			w.refuse(k, field, "not supported by pipectl: only the trainer container runs, and it gets the rank environment")
		}
	case FrameworkMPI:
		h["numProcPerNode"] = func(_, v *yaml.Node, field string) { r.ProcsPerNode = w.count(v, field) }
		h["mpiImplementation"] = func(_, v *yaml.Node, field string) {
			if s := w.str(v, field); s != "" && s != "OpenMPI" {
				w.refuse(v, field, "pipectl's mpi writes OpenMPI's hostfile: expected OpenMPI, got %q", s)
			}
		}
		h["sshAuthMountPath"] = w.ignore("pipectl's mpi needs no SSH keys")
		h["runLauncherAsNode"] = func(_, v *yaml.Node, field string) {
			if v.Value != "true" {
				w.warn(v, field, "ignored: pipectl runs the command on node 0, which trains too (as runLauncherAsNode: true)")
			}
		}
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	w.fields(n, field, h, nil)
}

// procs reads torch's numProcPerNode: a count, or auto (0: pipectl's
// default, the GPUs of a rank pod, else 1).
func (w *walker) procs(n *yaml.Node, field string) int {
	if n.Kind == yaml.ScalarNode && n.Value == "auto" {
		return 0
	}
	if n.Kind == yaml.ScalarNode && (n.Value == "cpu" || n.Value == "gpu") {
		w.refuse(n, field, "%q is not supported by pipectl: expected a number, or auto (the GPUs of a rank pod, else 1)", n.Value)
		return 0
	}
	return w.count(n, field)
}

func (w *walker) podGroupPolicy(n *yaml.Node, field string, r *Runtime) {
	w.fields(n, field, map[string]func(k, v *yaml.Node, field string){
		"coscheduling": func(_, v *yaml.Node, field string) {
			r.PodGroup = "coscheduling"
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				return
			}
			w.fields(v, field, map[string]func(k, v *yaml.Node, field string){
				"scheduleTimeoutSeconds": func(_, v *yaml.Node, field string) { r.PodGroupTimeout = w.count(v, field) },
			}, nil)
		},
		"volcano": func(_, v *yaml.Node, field string) {
			r.PodGroup = "volcano"
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				return
			}
			w.fields(v, field, map[string]func(k, v *yaml.Node, field string){
				"networkTopology": func(k, _ *yaml.Node, field string) { w.refuse(k, field, "not supported by pipectl's PodGroup") },
			}, nil)
		},
	}, nil)
}

// jobSetSpec reads the JobSet template's spec: the trainer job (node),
// an MPI runtime's launcher, and refuses the jobs pipectl does not run.
func (w *walker) jobSetSpec(n *yaml.Node, field string, r *Runtime) {
	mpi := r.Framework == FrameworkMPI
	var launcher Pod
	var at *yaml.Node // the launcher job's name
	w.fields(n, field, map[string]func(k, v *yaml.Node, field string){
		"replicatedJobs": func(_, v *yaml.Node, field string) {
			w.list(v, field, func(_ int, job *yaml.Node, field string) {
				name, _, _ := lookup(job, "name")
				switch {
				case name != nil && name.Value == "node":
					w.replicatedJob(job, field, &r.Pod, mpi)
				case name != nil && name.Value == "launcher" && mpi:
					w.replicatedJob(job, field, &launcher, false)
					at = name
				case name != nil:
					w.refuse(name, field, "pipectl runs only the trainer job (node) of a runtime: Trainer's %q job is not run "+
						"(fetch data or models in a step before this one, or give them as the step's inputs)", name.Value)
				default:
					w.errorf(job, field, "missing: name")
				}
			})
		},
		"network":       w.ignore("pipectl's JobSet sets the network its ranks need"),
		"successPolicy": w.ignore("a pipectl gang succeeds when every rank does (for mpi: node 0's command)"),
		"volumeClaimPolicies": func(k, _ *yaml.Node, field string) {
			w.refuse(k, field, "not supported by pipectl: a step has no volumes")
		},
	}, reflect.TypeOf(jobsetv1alpha2.JobSetSpec{}))
	if r.Pod.Image == "" {
		r.Pod.Image = launcher.Image
	}
	if at != nil && launcherSetsMore(launcher) {
		w.warn(at, field+".replicatedJobs", "ignored: the launcher job's fields other than its image: pipectl runs the command on node 0, "+
			"which takes the node job's fields")
	}
}

// launcherSetsMore reports whether an MPI runtime's launcher pod sets
// fields beyond its image.
func launcherSetsMore(p Pod) bool {
	return p.Command != nil || p.Args != nil || p.Env != nil || p.Requests != nil || p.Limits != nil || p.NodeSelector != nil ||
		p.Tolerations != nil || p.Affinity != nil || p.PriorityClass != ""
}

// replicatedJob reads one replicated job's pod template into p.
func (w *walker) replicatedJob(n *yaml.Node, field string, p *Pod, mpi bool) {
	w.fields(n, field, map[string]func(k, v *yaml.Node, field string){
		"name":      skip,
		"replicas":  w.ignore("the trainer job runs numNodes pods"),
		"dependsOn": skip, // the jobs it waits for are refused themselves; mpi's launcher order is pipectl's own
		"template": func(_, v *yaml.Node, field string) {
			w.fields(v, field, map[string]func(k, v *yaml.Node, field string){
				"metadata": skip, // the Job's labels (Trainer's ancestor-step label)
				"spec": func(_, v *yaml.Node, field string) {
					w.fields(v, field, map[string]func(k, v *yaml.Node, field string){
						"template": func(_, v *yaml.Node, field string) {
							w.fields(v, field, map[string]func(k, v *yaml.Node, field string){
								"metadata": func(k, _ *yaml.Node, field string) {
									w.refuse(k, field, "not supported by pipectl: give the step podMetadata")
								},
								"spec": func(_, v *yaml.Node, field string) { w.podSpec(v, field, p, mpi) },
							}, nil)
						},
					}, reflect.TypeOf(batchv1.JobSpec{}))
				},
			}, nil)
		},
	}, reflect.TypeOf(jobsetv1alpha2.ReplicatedJob{}))
}
