package trainer

import (
	"reflect"

	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"
)

// Pod is what a trainer pod of a runtime (or a TrainJob's patch of it)
// gives a distributed step. Empty fields are not set.
type Pod struct {
	Image         string
	Command, Args []string
	// Env are the container's variables, in file order.
	Env []EnvVar
	// Requests and Limits are the container's resources, by resource name.
	Requests, Limits map[string]string
	NodeSelector     map[string]string
	// Tolerations is nil when not set (an empty list is set).
	Tolerations []Toleration
	// Affinity is the pod's affinity as written, nil when not set.
	Affinity      *yaml.Node
	PriorityClass string
}

// EnvVar is one variable with its value as written.
type EnvVar struct{ Name, Value string }

// Toleration is a pod toleration.
type Toleration struct{ Key, Operator, Value, Effect string }

// TrainerContainer is the name of the container of the trainer job that
// runs the training (Trainer's convention).
const TrainerContainer = "node"

// podSpec reads a pod spec (the trainer job's) into p. mpi says the
// runtime is an MPI one: its node container runs sshd, which pipectl
// does not need.
func (w *walker) podSpec(n *yaml.Node, field string, p *Pod, mpi bool) {
	w.fields(n, field, map[string]func(k, v *yaml.Node, field string){
		"containers": func(_, v *yaml.Node, field string) {
			w.list(v, field, func(_ int, c *yaml.Node, field string) { w.container(c, field, p, mpi) })
		},
		"nodeSelector": func(_, v *yaml.Node, field string) { p.NodeSelector = w.stringMap(v, field) },
		"tolerations": func(_, v *yaml.Node, field string) {
			p.Tolerations = []Toleration{}
			w.list(v, field, func(_ int, t *yaml.Node, field string) { p.Tolerations = append(p.Tolerations, w.toleration(t, field)) })
		},
		"affinity":          func(_, v *yaml.Node, _ string) { p.Affinity = v },
		"priorityClassName": func(_, v *yaml.Node, field string) { p.PriorityClass = w.str(v, field) },
		"securityContext":   w.ignore("pipectl's rank pods keep the security context pipectl gives them (locally there is no pod)"),
		"serviceAccountName": w.ignore("pipectl's rank pods run under the ServiceAccount of the run's namespace that pipectl's launcher uses " +
			"(locally there is no pod)"),
	}, reflect.TypeOf(corev1.PodSpec{}))
}

// container reads one container of the trainer pod: the one named node
// is the trainer; any other is a sidecar pipectl cannot run.
func (w *walker) container(n *yaml.Node, field string, p *Pod, mpi bool) {
	if name, _, _ := lookup(n, "name"); name == nil || name.Value != TrainerContainer {
		w.refuse(n, field, "pipectl runs only the trainer container (named %q): other containers (sidecars) are not supported", TrainerContainer)
		return
	}
	sshd := w.ignore("an MPI runtime's nodes run sshd for Trainer's launcher; pipectl's mpi starts the ranks itself")
	h := map[string]func(k, v *yaml.Node, field string){
		"name":           skip,
		"image":          func(_, v *yaml.Node, field string) { p.Image = w.str(v, field) },
		"command":        func(_, v *yaml.Node, field string) { p.Command = w.strings(v, field) },
		"args":           func(_, v *yaml.Node, field string) { p.Args = w.strings(v, field) },
		"env":            func(_, v *yaml.Node, field string) { p.Env = w.env(v, field) },
		"resources":      func(_, v *yaml.Node, field string) { p.Requests, p.Limits = w.resources(v, field) },
		"readinessProbe": sshd, "livenessProbe": sshd, "startupProbe": sshd, "ports": sshd,
		"securityContext": w.ignore("pipectl's rank pods keep the security context pipectl gives them (locally there is no pod)"),
	}
	if mpi {
		h["command"], h["args"] = sshd, sshd
	}
	w.fields(n, field, h, reflect.TypeOf(corev1.Container{}))
}

// env reads a list of name/value variables.
func (w *walker) env(n *yaml.Node, field string) []EnvVar {
	var out []EnvVar
	w.list(n, field, func(_ int, e *yaml.Node, field string) {
		var v EnvVar
		w.fields(e, field, map[string]func(k, v *yaml.Node, field string){
			"name":  func(_, n *yaml.Node, field string) { v.Name = w.str(n, field) },
			"value": func(_, n *yaml.Node, field string) { v.Value = w.str(n, field) },
			"valueFrom": func(k, _ *yaml.Node, field string) {
				w.refuse(k, field, "not supported by pipectl: give the value, or a Secret through the step's secrets:")
			},
		}, nil)
		if v.Name == "" {
			w.errorf(e, field, "missing: name")
		}
		out = append(out, v)
	})
	return out
}

// resources reads a ResourceRequirements.
func (w *walker) resources(n *yaml.Node, field string) (requests, limits map[string]string) {
	w.fields(n, field, map[string]func(k, v *yaml.Node, field string){
		"requests": func(_, v *yaml.Node, field string) { requests = w.stringMap(v, field) },
		"limits":   func(_, v *yaml.Node, field string) { limits = w.stringMap(v, field) },
	}, reflect.TypeOf(corev1.ResourceRequirements{}))
	return requests, limits
}

func (w *walker) toleration(n *yaml.Node, field string) Toleration {
	var t Toleration
	w.fields(n, field, map[string]func(k, v *yaml.Node, field string){
		"key":      func(_, v *yaml.Node, field string) { t.Key = w.str(v, field) },
		"operator": func(_, v *yaml.Node, field string) { t.Operator = w.str(v, field) },
		"value":    func(_, v *yaml.Node, field string) { t.Value = w.str(v, field) },
		"effect":   func(_, v *yaml.Node, field string) { t.Effect = w.str(v, field) },
	}, reflect.TypeOf(corev1.Toleration{}))
	return t
}

// lookup is the value at key of mapping n.
func lookup(n *yaml.Node, key string) (value, k *yaml.Node, ok bool) {
	if n.Kind != yaml.MappingNode {
		return nil, nil, false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1], n.Content[i], true
		}
	}
	return nil, nil, false
}
