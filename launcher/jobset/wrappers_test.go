package jobset

import (
	"time"

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

// Test builders in the manner of jobset's pkg/util/testing: a wrapper per
// object, each method sets one thing, Obj returns the object.

// specWrapper wraps a plan.Launch.
type specWrapper struct{ plan.Launch }

func makeSpec(nodes, procs int) *specWrapper {
	return &specWrapper{plan.Launch{
		Version: wire.LaunchVersion, Pipeline: "attrition", Image: "train:1", PipectlImage: "pipectl:test",
		Distributed: plan.Distributed{Nodes: nodes, ProcsPerNode: procs},
	}}
}

func (w *specWrapper) MaxRestarts(n int) *specWrapper { w.Launch.MaxRestarts = n; return w }
func (w *specWrapper) Port(p int) *specWrapper        { w.Launch.Port = p; return w }
func (w *specWrapper) Framework(f rankenv.Framework) *specWrapper {
	w.Launch.Framework = f
	return w
}
func (w *specWrapper) ShmSize(s string) *specWrapper { w.Launch.ShmSize = s; return w }
func (w *specWrapper) GPU(name string, n int64) *specWrapper {
	q := *resource.NewQuantity(n, resource.DecimalSI)
	w.Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceName(name): q, corev1.ResourceCPU: resource.MustParse("2")},
		Limits:   corev1.ResourceList{corev1.ResourceName(name): q, corev1.ResourceCPU: resource.MustParse("2")},
	}
	return w
}
func (w *specWrapper) Tolerations(t ...corev1.Toleration) *specWrapper {
	w.Launch.Tolerations = t
	return w
}
func (w *specWrapper) Kueue(q string) *specWrapper {
	w.Gang = &plan.Gang{KueueQueue: q}
	return w
}
func (w *specWrapper) PodGroup(scheduler string, timeout time.Duration) *specWrapper {
	w.Gang = &plan.Gang{PodGroupScheduler: scheduler, PodGroupTimeout: pipeline.Duration{Duration: timeout}}
	return w
}
func (w *specWrapper) Obj() *plan.Launch { return &w.Launch }

// jobSetWrapper wraps the JobSet BuildJobSet makes for the defaults of
// testOptions, to be changed by the methods.
type jobSetWrapper struct{ jobsetv1alpha2.JobSet }

// makeJobSet returns the expected JobSet of a spec of makeSpec(nodes, 1)
// with testOptions: the shape every case starts from.
func makeJobSet(name string, nodes int) *jobSetWrapper {
	labels := func() map[string]string {
		return map[string]string{wire.LabelPipeline: "attrition", wire.LabelRun: "run-1", wire.LabelStep: "train"}
	}
	return &jobSetWrapper{jobsetv1alpha2.JobSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "jobset.x-k8s.io/v1alpha2", Kind: "JobSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml", Labels: labels()},
		Spec: jobsetv1alpha2.JobSetSpec{
			ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{{
				Name: "rank", Replicas: 1,
				Template: batchv1.JobTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels()},
					Spec: batchv1.JobSpec{
						Parallelism: ptr.To(int32(nodes)), Completions: ptr.To(int32(nodes)),
						CompletionMode: ptr.To(batchv1.IndexedCompletion), BackoffLimit: ptr.To(int32(0)),
						PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
							Action: batchv1.PodFailurePolicyActionFailJob,
							OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
								ContainerName: ptr.To("rank"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{78},
							},
						}}},
						Template: corev1.PodTemplateSpec{
							ObjectMeta: metav1.ObjectMeta{Labels: labels()},
							Spec: corev1.PodSpec{
								RestartPolicy: corev1.RestartPolicyNever,
								Volumes: []corev1.Volume{
									{Name: "pipectl", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
									{Name: "dshm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
								},
								InitContainers: []corev1.Container{{
									Name: "pipectl", Image: "pipectl:test",
									Command:      []string{"/pipectl/pipectl-pod", "exec", "--install", "/pipectl-install/pipectl"},
									VolumeMounts: []corev1.VolumeMount{{Name: "pipectl", MountPath: "/pipectl-install"}},
								}},
								Containers: []corev1.Container{{
									Name: "rank", Image: "train:1",
									Command: []string{"/pipectl/pipectl", "exec"},
									Args: []string{"--gang", "--run=run-1", "--work=/pipectl/work", "--step=STEP",
										"--param=epochs=3", "--param=tmpl=pipectl-b64:e3tub3R9fQ==", "--upstream=threshold=0.5", "--component=COMP"},
									Env:          []corev1.EnvVar{{Name: "PIPECTL_ARTIFACTS", Value: "s3://ml/runs"}},
									VolumeMounts: []corev1.VolumeMount{{Name: "pipectl", MountPath: "/pipectl"}, {Name: "dshm", MountPath: "/dev/shm"}},
								}},
							},
						},
					},
				},
			}},
			Network: &jobsetv1alpha2.Network{EnableDNSHostnames: ptr.To(true), PublishNotReadyAddresses: ptr.To(true)},
			FailurePolicy: &jobsetv1alpha2.FailurePolicy{
				RestartStrategy: jobsetv1alpha2.BlockingRecreate,
				Rules: []jobsetv1alpha2.FailurePolicyRule{{
					Name: "pipectlNoRestart", Action: jobsetv1alpha2.FailJobSet, OnJobFailureReasons: []string{"PodFailurePolicy"},
				}},
			},
			TTLSecondsAfterFinished: ptr.To(int32(600)),
		},
	}}
}

func (w *jobSetWrapper) pod() *corev1.PodTemplateSpec {
	return &w.Spec.ReplicatedJobs[0].Template.Spec.Template
}

func (w *jobSetWrapper) container() *corev1.Container { return &w.pod().Spec.Containers[0] }

// RankEnv appends the rank env vars.
func (w *jobSetWrapper) RankEnv(env ...corev1.EnvVar) *jobSetWrapper {
	w.container().Env = append(w.container().Env, env...)
	return w
}

func (w *jobSetWrapper) MaxRestarts(n int32) *jobSetWrapper {
	w.Spec.FailurePolicy.MaxRestarts = n
	return w
}

func (w *jobSetWrapper) Resources(r corev1.ResourceRequirements) *jobSetWrapper {
	w.container().Resources = r
	return w
}

// Shm sets the size limit of the memory-backed /dev/shm.
func (w *jobSetWrapper) Shm(size string) *jobSetWrapper {
	q := resource.MustParse(size)
	w.pod().Spec.Volumes[1].EmptyDir.SizeLimit = &q
	return w
}

func (w *jobSetWrapper) Tolerations(t ...corev1.Toleration) *jobSetWrapper {
	w.pod().Spec.Tolerations = t
	return w
}

func (w *jobSetWrapper) Suspend(b bool) *jobSetWrapper {
	w.Spec.Suspend = ptr.To(b)
	return w
}

func (w *jobSetWrapper) Label(k, v string) *jobSetWrapper {
	w.Labels[k] = v
	return w
}

// StepLabel sets a label of the JobSet, its job and its pods.
func (w *jobSetWrapper) StepLabel(k, v string) *jobSetWrapper {
	w.Labels[k] = v
	w.Spec.ReplicatedJobs[0].Template.Labels[k] = v
	w.pod().Labels[k] = v
	return w
}

// ArgsBefore puts args before the rank container's last argument (--component).
func (w *jobSetWrapper) ArgsBefore(args ...string) *jobSetWrapper {
	c := w.container()
	n := len(c.Args)
	c.Args = append(append(append([]string{}, c.Args[:n-1]...), args...), c.Args[n-1])
	return w
}

func (w *jobSetWrapper) PodLabel(k, v string) *jobSetWrapper {
	w.pod().Labels[k] = v
	return w
}

func (w *jobSetWrapper) PodAnnotation(k, v string) *jobSetWrapper {
	if w.pod().Annotations == nil {
		w.pod().Annotations = map[string]string{}
	}
	w.pod().Annotations[k] = v
	return w
}

func (w *jobSetWrapper) SchedulerName(n string) *jobSetWrapper {
	w.pod().Spec.SchedulerName = n
	return w
}

func (w *jobSetWrapper) Owner(name, uid string) *jobSetWrapper {
	w.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: name, UID: types.UID(uid), BlockOwnerDeletion: ptr.To(true)}}
	return w
}

func (w *jobSetWrapper) Obj() *jobsetv1alpha2.JobSet { return &w.JobSet }
