package jobset

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
	"pipectl.dev/pipectl/pipeline/plan"
)

// Label and annotation keys the launcher sets or reads.
const (
	// LabelKueueQueue is Kueue's queue label: the LocalQueue that admits the JobSet.
	LabelKueueQueue = "kueue.x-k8s.io/queue-name"
	// LabelCoschedulingPodGroup puts a pod in a coscheduling PodGroup.
	LabelCoschedulingPodGroup = "scheduling.x-k8s.io/pod-group"
	// AnnotationVolcanoPodGroup puts a pod in a Volcano PodGroup.
	AnnotationVolcanoPodGroup = "scheduling.k8s.io/group-name"
	// AnnotationCompletionIndex is the Job completion index of an Indexed
	// Job's pod: the node rank.
	AnnotationCompletionIndex = batchv1.JobCompletionIndexAnnotation
	// LabelRestartAttempt is the JobSet restart attempt a pod belongs to.
	LabelRestartAttempt = "jobset.sigs.k8s.io/restart-attempt"
)

// Names, paths and defaults of the JobSet.
const (
	// RankJobName is the name of the JobSet's one replicated job.
	RankJobName = "rank"
	// RankContainer names the rank pod's main container (its init
	// container is wire.InitContainer).
	RankContainer = "rank"
	// DefaultPort is MASTER_PORT when the spec gives none (torchrun's default).
	DefaultPort = 29500
	// DefaultTTLSecondsAfterFinished lets the JobSet controller delete a
	// finished JobSet whose launcher could not.
	DefaultTTLSecondsAfterFinished = 600
	// ExitConfig is the exit code (sysexits' EX_CONFIG) with which `pipectl
	// exec --gang` reports a failure no restart can heal: a bad spec, an
	// input the component does not declare, a declared output the program
	// did not write. The rank Job's podFailurePolicy fails the Job on it and
	// the JobSet's failurePolicy then fails the JobSet at once.
	ExitConfig = 78
	// FailureRuleName names the JobSet failure policy rule of ExitConfig.
	FailureRuleName = "pipectlNoRestart"
)

// Schedulers of PodGroup gangs.
const (
	SchedulerCoscheduling = "coscheduling"
	SchedulerVolcano      = "volcano"
	// CoschedulingSchedulerName is the schedulerName of the scheduler-plugins
	// scheduler that runs the coscheduling plugin (its Helm chart's default).
	CoschedulingSchedulerName = "scheduler-plugins-scheduler"
	// VolcanoSchedulerName is Volcano's schedulerName.
	VolcanoSchedulerName = "volcano"
)

// Owner is the object that owns the JobSet: the launcher's own pod, so that
// deleting the workflow deletes the JobSet and its pods.
type Owner struct {
	Name string
	UID  string
}

// BuildOptions are what the JobSet of a step needs beyond its plan.Launch.
type BuildOptions struct {
	// Namespace is the JobSet's namespace.
	Namespace string
	// Step is the step's name in the run record: a loop iteration's is
	// STEP[i] (pipeline.IterationName), so each iteration has a JobSet of
	// its own.
	Step string
	// Exec are the rank containers' exec arguments: BuildJobSet adds --gang
	// and the pod's work directory.
	Exec wire.Args
	// Command is the rank program's argv as the component declares it: it
	// decides whether the ranks run torchrun.
	Command []string
	// Owner, when set, owns the JobSet and PodGroup.
	Owner *Owner
	// TTLSecondsAfterFinished is the JobSet's (0 for DefaultTTLSecondsAfterFinished).
	TTLSecondsAfterFinished int32
	// SchedulerName overrides the PodGroup scheduler's schedulerName.
	SchedulerName string
}

// BuildJobSet returns the JobSet of a distributed step: one replicated job
// of spec.Nodes Indexed pods, each running `pipectl exec --gang` with the
// rank environment and a memory-backed /dev/shm of spec.ShmSize. It is
// pure: the same arguments give the same JobSet.
func BuildJobSet(spec *plan.Launch, o BuildOptions) *jobsetv1alpha2.JobSet {
	nodes := max(spec.Nodes, 1)
	name := JobSetName(o.Exec.Run, o.Step, nodes)
	labels := stepLabels(spec, o)
	podLabels, podAnnotations := maps.Clone(labels), map[string]string(nil)
	shm := &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}
	if spec.ShmSize != "" {
		if q, err := resource.ParseQuantity(spec.ShmSize); err == nil {
			shm.SizeLimit = &q
		}
	}
	pod := corev1.PodSpec{
		RestartPolicy:      corev1.RestartPolicyNever,
		ServiceAccountName: spec.ServiceAccountName,
		NodeSelector:       maps.Clone(spec.NodeSelector),
		Tolerations:        slices.Clone(spec.Tolerations),
		PriorityClassName:  spec.PriorityClassName,
		Volumes: []corev1.Volume{
			{Name: wire.VolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: wire.ShmVolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: shm}},
		},
		InitContainers: []corev1.Container{wire.InitContainer(spec.PipectlImage)},
		Containers: []corev1.Container{{
			Name:      RankContainer,
			Image:     spec.Image,
			Command:   []string{wire.Binary, "exec"},
			Args:      rankArgs(o.Exec),
			Env:       slices.Concat(spec.Env, secretEnv(spec), RankEnvVars(&spec.Distributed, name, o.Command), mpiEnv(&spec.Distributed)),
			Resources: *spec.Resources.DeepCopy(),
			VolumeMounts: []corev1.VolumeMount{
				{Name: wire.VolumeName, MountPath: wire.MountPath},
				{Name: wire.ShmVolumeName, MountPath: wire.ShmPath},
			},
		}},
	}
	if spec.Affinity != nil {
		pod.Affinity = spec.Affinity.DeepCopy()
	}
	if g := spec.Gang; g != nil && g.PodGroupScheduler != "" {
		pod.SchedulerName = schedulerName(g.PodGroupScheduler, o.SchedulerName)
		if g.PodGroupScheduler == SchedulerVolcano {
			podAnnotations = map[string]string{AnnotationVolcanoPodGroup: name}
		} else {
			podLabels[LabelCoschedulingPodGroup] = name
		}
	}
	ttl := o.TTLSecondsAfterFinished
	if ttl == 0 {
		ttl = DefaultTTLSecondsAfterFinished
	}
	js := &jobsetv1alpha2.JobSet{
		TypeMeta: metav1.TypeMeta{APIVersion: jobsetv1alpha2.GroupVersion.String(), Kind: "JobSet"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       o.Namespace,
			Labels:          labels,
			OwnerReferences: ownerReferences(o.Owner),
		},
		Spec: jobsetv1alpha2.JobSetSpec{
			ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{{
				Name:     RankJobName,
				Replicas: 1,
				Template: batchv1.JobTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(labels)},
					Spec: batchv1.JobSpec{
						Parallelism:    ptr.To(int32(nodes)),
						Completions:    ptr.To(int32(nodes)),
						CompletionMode: ptr.To(batchv1.IndexedCompletion),
						// Any failed rank fails the Job; the JobSet restarts the gang.
						BackoffLimit: ptr.To(int32(0)),
						PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
							Action: batchv1.PodFailurePolicyActionFailJob,
							OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
								ContainerName: ptr.To(RankContainer),
								Operator:      batchv1.PodFailurePolicyOnExitCodesOpIn,
								Values:        []int32{ExitConfig},
							},
						}}},
						Template: corev1.PodTemplateSpec{
							ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: podAnnotations},
							Spec:       pod,
						},
					},
				},
			}},
			Network: &jobsetv1alpha2.Network{
				EnableDNSHostnames:       ptr.To(true),
				PublishNotReadyAddresses: ptr.To(true),
			},
			FailurePolicy: &jobsetv1alpha2.FailurePolicy{
				MaxRestarts: int32(spec.MaxRestarts),
				// The old gang is gone before the new one starts: no two
				// generations in one rendezvous, no GPUs held twice.
				RestartStrategy: jobsetv1alpha2.BlockingRecreate,
				Rules: []jobsetv1alpha2.FailurePolicyRule{{
					Name:                FailureRuleName,
					Action:              jobsetv1alpha2.FailJobSet,
					OnJobFailureReasons: []string{batchv1.JobReasonPodFailurePolicy},
				}},
			},
			TTLSecondsAfterFinished: ptr.To(ttl),
		},
	}
	mpiPod(spec, name, &js.Spec.ReplicatedJobs[0].Template.Spec)
	if g := spec.Gang; g != nil && g.KueueQueue != "" {
		js.Labels[LabelKueueQueue] = g.KueueQueue
		// Kueue admits a suspended JobSet by unsuspending it.
		js.Spec.Suspend = ptr.To(true)
	}
	return js
}

// stepLabels are the labels of the JobSet and its jobs and pods.
func stepLabels(spec *plan.Launch, o BuildOptions) map[string]string {
	l := map[string]string{
		wire.LabelRun:  labelValue(o.Exec.Run),
		wire.LabelStep: labelValue(o.Step),
	}
	// A label value holds no brackets: STEP[i] is labelled STEP and i.
	if step, i, ok := pipeline.SplitIteration(o.Step); ok {
		l[wire.LabelStep], l[wire.LabelIteration] = labelValue(step), strconv.Itoa(i)
	}
	if spec.Pipeline != "" {
		l[wire.LabelPipeline] = labelValue(spec.Pipeline)
	}
	return l
}

func ownerReferences(o *Owner) []metav1.OwnerReference {
	if o == nil || o.Name == "" || o.UID == "" {
		return nil
	}
	return []metav1.OwnerReference{{
		APIVersion:         "v1",
		Kind:               "Pod",
		Name:               o.Name,
		UID:                types.UID(o.UID),
		BlockOwnerDeletion: ptr.To(true),
	}}
}

func schedulerName(scheduler, override string) string {
	switch {
	case override != "":
		return override
	case scheduler == SchedulerVolcano:
		return VolcanoSchedulerName
	default:
		return CoschedulingSchedulerName
	}
}

// rankArgs are a rank container's arguments after `pipectl exec`.
func rankArgs(e wire.Args) []string {
	e.Gang, e.WorkDir = true, wire.WorkDir
	return e.Flags()
}

// secretEnv is the rank containers' variables from Secrets. The launcher
// names the Secrets named by params (launcher.FromWire) before it builds
// the JobSet; one left unnamed stays as written ("{{params.NAME}}"), which
// no Secret is.
func secretEnv(spec *plan.Launch) []corev1.EnvVar {
	return spec.SecretEnv(func(s pipeline.Secret) string { return s.Secret })
}

// RankEnvVars returns the rank environment of a rank container of JobSet
// jobset: the contract of Topology for the step's framework (package
// rankenv's table, the one the local gang uses), with the node rank (and,
// with one process per pod, the rank) read from the pod's Job completion
// index. With one rank process per pod, the pod is the rank; when the
// command is torchrun, or the framework runs one process per node (jax),
// it gets the node's variables; with more processes per pod, `pipectl exec
// --gang` spawns them, giving each its rank-level variables.
func RankEnvVars(d *plan.Distributed, jobset string, command []string) []corev1.EnvVar {
	port := d.Port
	if port == 0 {
		port = DefaultPort
	}
	t := rankenv.Topology{Nodes: max(d.Nodes, 1), ProcsPerNode: max(d.ProcsPerNode, 1), MasterAddr: MasterAddr(jobset), MasterPort: port, Framework: d.Framework}
	if d.Framework == rankenv.MPI {
		t.Hostfile = wire.MPIHostfile
	}
	perPod := t.ProcsPerNode == 1 && !t.PerNode(command)
	index := &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
		FieldPath: fmt.Sprintf("metadata.annotations['%s']", AnnotationCompletionIndex),
	}}
	var out []corev1.EnvVar
	for _, v := range t.PodEnv(perPod) {
		if v.FromIndex {
			out = append(out, corev1.EnvVar{Name: v.Name, ValueFrom: index.DeepCopy()})
		} else {
			out = append(out, corev1.EnvVar{Name: v.Name, Value: v.Value})
		}
	}
	return out
}

// totalResources returns each request multiplied by n.
func totalResources(l corev1.ResourceList, n int) corev1.ResourceList {
	if len(l) == 0 {
		return nil
	}
	out := corev1.ResourceList{}
	for k, q := range l {
		t := q.DeepCopy()
		t.Mul(int64(n))
		out[k] = t
	}
	return out
}
