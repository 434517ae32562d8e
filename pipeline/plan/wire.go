package plan

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/pipeline"
)

// Versions of the wire forms. A reader accepts only its own version: the
// compiler and the pods must run the same pipectl.
const (
	WiringVersion = 4
	LaunchVersion = 2
)

// Launch is what `pipectl launch` gets as --distributed: the step's
// Distributed plan, flattened, with what the rank pods need of the cluster
// the workflow was compiled for.
type Launch struct {
	// Version is LaunchVersion.
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

// Encode returns base64(JSON(v)): the form --component, --step and
// --distributed take. JSON object keys are sorted, so the same value always
// gives the same text.
func Encode(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// Decode reverses Encode into v, strictly: unknown fields and a version
// other than version are errors.
func Decode(s string, version int, v any) error {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("not base64: %v", err)
	}
	var head struct {
		Version int `json:"v"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if head.Version != version {
		return fmt.Errorf("spec version %d, this pipectl reads version %d (use the same pipectl image as the compiler)", head.Version, version)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// DecodeComponent reads the --component flag: a components.Program of
// ProgramVersion (its argv is checked when it runs: Program.WithArgv).
func DecodeComponent(s string) (*components.Program, error) {
	var c components.Program
	if err := Decode(s, components.ProgramVersion, &c); err != nil {
		return nil, fmt.Errorf("--component: %w", err)
	}
	return &c, nil
}

// DecodeWiring reads the --step flag.
func DecodeWiring(s string) (*Wiring, error) {
	var w Wiring
	if err := Decode(s, WiringVersion, &w); err != nil {
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
	if err := Decode(s, LaunchVersion, &l); err != nil {
		return nil, fmt.Errorf("--distributed: %w", err)
	}
	return &l, nil
}
