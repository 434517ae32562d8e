package plan

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
)

// Launch is what `pipectl launch` gets as --distributed: the step's
// Distributed plan, flattened, with what the rank pods need of the cluster
// the workflow was compiled for.
type Launch struct {
	// Version is wire.LaunchVersion.
	Version int `json:"v"`
	// Pipeline is the pipeline's metadata.name (a label of the JobSet).
	Pipeline string `json:"pipeline,omitempty"`
	// Image is the component's image, which every rank runs.
	Image string `json:"image"`
	// PipectlImage is the pipectl image of the rank pods' init container.
	PipectlImage string `json:"pipectlImage"`
	// Timeout bounds one attempt of the step (0: no bound); the launcher
	// pod's activeDeadlineSeconds is the same.
	Timeout pipeline.Duration `json:"timeout,omitzero"`
	Distributed
	// ServiceAccountName runs the rank pods ("" for the namespace's default).
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// Env is the rank containers' store environment (PIPECTL_ARTIFACTS, S3
	// settings; credentials by Secret reference).
	Env []corev1.EnvVar `json:"env,omitempty"`
}

// DecodeComponent reads the --component flag: a components.Program of
// ProgramVersion (its argv is checked when it runs: Program.WithArgv).
func DecodeComponent(s string) (*components.Program, error) {
	var c components.Program
	if err := wire.Decode(s, components.ProgramVersion, &c); err != nil {
		return nil, fmt.Errorf("--component: %w", err)
	}
	return &c, nil
}

// DecodeWiring reads the --step flag.
func DecodeWiring(s string) (*Wiring, error) {
	var w Wiring
	if err := wire.Decode(s, wire.WiringVersion, &w); err != nil {
		return nil, fmt.Errorf("--step: %w", err)
	}
	if w.Step == "" {
		return nil, fmt.Errorf("--step: the step spec names no step")
	}
	return &w, nil
}

// DecodeLaunch reads the --distributed flag.
func DecodeLaunch(s string) (*Launch, error) {
	var l Launch
	if err := wire.Decode(s, wire.LaunchVersion, &l); err != nil {
		return nil, fmt.Errorf("--distributed: %w", err)
	}
	return &l, nil
}
