package plan

// Paths inside every pod that runs pipectl: compiled step pods and the rank
// pods of a distributed step. An init container copies the pipectl binary
// from the pipectl image into an emptyDir, which the main container mounts.
const (
	// Binary is where the pipectl binary is, in the pipectl image and, once
	// the init container copied it, in every step and rank container.
	Binary = "/pipectl/pipectl"
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
)

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

// DefaultGPUResource is the extended resource GPUs are requested as.
const DefaultGPUResource = "nvidia.com/gpu"
