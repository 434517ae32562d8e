package wire

import (
	corev1 "k8s.io/api/core/v1"
)

// Paths inside every pod that runs pipectl: compiled step pods and the rank
// pods of a distributed step. An init container copies the pipectl binary
// from the pipectl image into an emptyDir, which the main container mounts.
const (
	// Binary is where the pipectl binary is, in the pipectl image and, once
	// the init container copied it, in every step and rank container.
	Binary = "/pipectl/pipectl"
	// PodBinary is where the pod runtime is in the pipectl image: a binary
	// of only what step and rank pods run (exec), without the compiler,
	// the Argo and Kubernetes clients and the UI. The init container copies
	// it to Binary; the launcher pod runs the image's Binary itself.
	PodBinary = "/pipectl/pipectl-pod"
	// VolumeName is the emptyDir shared by the init and main containers.
	VolumeName = "pipectl"
	// MountPath is where step and rank containers mount the volume.
	MountPath = "/pipectl"
	// InstallPath is where the init container mounts the volume.
	InstallPath = "/pipectl-install"
	// WorkDir is exec's work directory (inputs and outputs) in a pod.
	WorkDir = MountPath + "/work"
	// ShmVolumeName is the memory-backed emptyDir mounted at ShmPath in
	// rank pods (the container runtime's default /dev/shm of 64 MiB makes
	// DataLoader workers and NCCL fail).
	ShmVolumeName = "dshm"
	ShmPath       = "/dev/shm"
	// OutputParamsDir is where a step pod's exec writes output parameters
	// for Argo.
	OutputParamsDir = MountPath + "/outputs"
	// LauncherMountPath is where a launcher pod mounts the volume; its
	// launcher writes output parameters to LauncherOutputParamsDir.
	LauncherMountPath       = "/var/run/pipectl"
	LauncherWorkDir         = LauncherMountPath + "/work"
	LauncherOutputParamsDir = LauncherMountPath + "/outputs"
	// InitContainerName names the init container that installs pipectl.
	InitContainerName = "pipectl"
	// RuntimeVolumeName is the image volume of the pipectl image that step
	// containers mount read-only at RuntimeMountPath when the pod runtime
	// is mounted instead of copied (PodRuntimeImageVolume): the pod
	// runtime is then RuntimeBinary.
	RuntimeVolumeName = "pipectl-runtime"
	RuntimeMountPath  = "/pipectl-runtime"
	RuntimeBinary     = RuntimeMountPath + PodBinary
)

// How a step pod gets the pod runtime (pipectl compile --pod-runtime).
const (
	// PodRuntimeCopy: an init container copies it into the emptyDir (the
	// default: every cluster can).
	PodRuntimeCopy = "copy"
	// PodRuntimeImageVolume: the pipectl image is mounted read-only as a
	// Kubernetes image volume (the ImageVolume feature: Kubernetes 1.31+
	// with the gate on, and a container runtime that supports it); nothing
	// is copied and no init container runs.
	PodRuntimeImageVolume = "image-volume"
)

// AnnotationSteps is the annotation of a compiled workflow that maps the
// pipeline's steps to their DAG tasks, in the pipeline's order: a JSON
// array of StepTask. A reader of the workflow's status finds a step's
// nodes through it, never by guessing the task's name; a finally step gets
// it as --argo-steps (see RunFields).
const AnnotationSteps = "pipectl.dev/steps"

// StepTask names a step and its DAG task in the compiled workflow.
type StepTask struct {
	// Step is the step's name in the pipeline.
	Step string `json:"step"`
	// Task is the name of its task in the DAG template "main".
	Task string `json:"task"`
}

// InitContainer is the init container of every step and rank pod: it
// copies the pod runtime (PodBinary) from the pipectl image into the shared
// volume, where the main container finds it as Binary.
func InitContainer(pipectlImage string) corev1.Container {
	return corev1.Container{
		Name:         InitContainerName,
		Image:        pipectlImage,
		Command:      []string{PodBinary, "exec", "--install", InstallPath + "/pipectl"},
		VolumeMounts: []corev1.VolumeMount{{Name: VolumeName, MountPath: InstallPath}},
	}
}

// FieldEnv is a variable holding a field of the pod (the downward API).
func FieldEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}

// Label keys set on the Kubernetes objects of a run.
const (
	// LabelPipeline is the pipeline's metadata.name.
	LabelPipeline = "pipectl.dev/pipeline"
	// LabelRun is the run id.
	LabelRun = "pipectl.dev/run"
	// LabelStep is the step's name.
	LabelStep = "pipectl.dev/step"
	// LabelIteration is a loop iteration's index (0-based), with LabelStep
	// the loop step's name.
	LabelIteration = "pipectl.dev/iteration"
)

// RecordRun is how a CronWorkflow's workflow records itself in the store
// (a pod running the pipectl image's Binary under the launcher's
// ServiceAccount): `pipectl schedule record-run --run=RUN
// --namespace=NAMESPACE --status=STATUS`, when it starts (STATUS Running:
// the record is written unless the store has one) and when it ends (its
// exit handler, STATUS the workflow's: the final record).
var RecordRun = []string{"schedule", "record-run"}

// Flags of RecordRun.
const (
	RecordRunFlagRun       = "run"
	RecordRunFlagNamespace = "namespace"
	RecordRunFlagStatus    = "status"
)
