package launcher

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"pipectl.dev/pipectl/components"
)

// LaunchSpec is what `pipectl launch` gets as --distributed: base64(JSON)
// of this. With the exec flags it also gets, it is everything needed to build
// the JobSet of a distributed step: each rank pod runs Image with the
// pipectl binary copied in from PipectlImage (as step pods do), as
// `/pipectl/pipectl exec --gang` with the launcher's own exec flags.
type LaunchSpec struct {
	// Version is components.ExecSpecVersion.
	Version int `json:"v"`
	// Pipeline is the pipeline's metadata.name (a label of the JobSet).
	Pipeline string `json:"pipeline,omitempty"`
	// Image is the component's image, which every rank runs.
	Image string `json:"image"`
	// PipectlImage is the pipectl image of the rank pods' init container.
	PipectlImage string `json:"pipectlImage"`
	// Nodes is the number of rank pods; ProcsPerNode the rank processes in each.
	Nodes        int `json:"nodes"`
	ProcsPerNode int `json:"procsPerNode"`
	// MaxRestarts is how often the whole gang is restarted after a rank fails.
	MaxRestarts int `json:"maxRestarts,omitempty"`
	// StartupTimeout bounds the time until every rank runs (a Go duration).
	StartupTimeout string `json:"startupTimeout,omitempty"`
	// Timeout bounds one attempt of the step (a Go duration); the launcher
	// pod's activeDeadlineSeconds is the same.
	Timeout string `json:"timeout,omitempty"`
	// Port is the rendezvous port (MASTER_PORT); 0 for DefaultPort.
	Port int `json:"port,omitempty"`
	// Resources are each rank pod's requests and limits.
	Resources corev1.ResourceRequirements `json:"resources"`
	// GPUResource is the extended resource the GPUs are requested as, when
	// the step requests GPUs: the builder makes sure its NoSchedule taint is
	// tolerated.
	GPUResource string `json:"gpuResource,omitempty"`
	// NodeSelector, Tolerations (with the GPU toleration added), Affinity and
	// PriorityClassName place each rank pod.
	NodeSelector      map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations       []corev1.Toleration `json:"tolerations,omitempty"`
	Affinity          *corev1.Affinity    `json:"affinity,omitempty"`
	PriorityClassName string              `json:"priorityClassName,omitempty"`
	// Gang selects gang scheduling.
	Gang *GangSpec `json:"gang,omitempty"`
	// ServiceAccountName runs the rank pods ("" for the namespace's default).
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// Env is the rank containers' store environment (PIPECTL_ARTIFACTS, S3
	// settings; credentials by Secret reference).
	Env []corev1.EnvVar `json:"env,omitempty"`
}

// GangSpec selects how all ranks are admitted together.
type GangSpec struct {
	// KueueQueue is the Kueue LocalQueue that admits the JobSet.
	KueueQueue string `json:"kueueQueue,omitempty"`
	// PodGroupScheduler is coscheduling or volcano; PodGroupTimeout its
	// schedule timeout (a Go duration).
	PodGroupScheduler string `json:"podGroupScheduler,omitempty"`
	PodGroupTimeout   string `json:"podGroupTimeout,omitempty"`
}

// DecodeLaunchSpec reads the --distributed flag of `pipectl launch`.
func DecodeLaunchSpec(s string) (*LaunchSpec, error) {
	var ls LaunchSpec
	if err := components.DecodeSpec(s, &ls); err != nil {
		return nil, fmt.Errorf("--distributed: %w", err)
	}
	return &ls, nil
}
