package jobset

import (
	"maps"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/gang/rankenv"
	"pipectl.dev/pipectl/pipeline/plan"
)

// A distributed step of framework mpi on Kubernetes (see package mpiagent):
// its rank pods are the hostfile's nodes, node 0 also Trainer's launcher.
// Every node pod serves pipectl's MPI agent; node 0 runs the command
// (mpirun …), whose rsh agent is `pipectl mpi-rsh`. The step's Secret
// (MPISecretName) holds the hostfile and the run's key pair, mounted in
// every node pod; the rank Job succeeds when node 0 does (its
// successPolicy), and the Job controller then stops the other nodes.

// MPISecretName is the name of the Secret of JobSet jobset's mpi step.
func MPISecretName(jobset string) string { return jobset + "-mpi" }

// PodHost is the DNS name of the pod of node i of JobSet jobset:
// "<jobset>-<rjob>-0-<i>.<jobset>" (the JobSet's headless service being
// the pods' subdomain).
func PodHost(jobset string, i int) string {
	return jobset + "-" + RankJobName + "-0-" + strconv.Itoa(i) + "." + jobset
}

// BuildMPISecret returns the Secret of an mpi step's JobSet js (nil for
// another framework): its hostfile (Trainer's "HOST slots=N" lines, a
// line per node pod). The launcher adds the run's key pair
// (wire.MPICertKey, wire.MPIKeyKey) when it creates it, so that a dry run
// shows no key. Like the JobSet it is owned by the launcher's pod, and the
// launcher deletes it with the JobSet.
func BuildMPISecret(spec *plan.Launch, js string, o BuildOptions) *corev1.Secret {
	if spec.Distributed.Framework != rankenv.MPI {
		return nil
	}
	nodes := max(spec.Nodes, 1)
	hosts := make([]string, nodes)
	for i := range hosts {
		hosts[i] = PodHost(js, i)
	}
	t := rankenv.Topology{Nodes: nodes, ProcsPerNode: max(spec.ProcsPerNode, 1), Framework: rankenv.MPI}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            MPISecretName(js),
			Namespace:       o.Namespace,
			Labels:          maps.Clone(stepLabels(spec, o)),
			OwnerReferences: ownerReferences(o.Owner),
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{wire.MPIHostfileKey: []byte(t.HostfileOf(hosts))},
	}
}

// mpiPod adds to the rank pod spec of an mpi step the volume of its Secret
// and its mount in the rank container, and to the rank Job its
// successPolicy: the Job (and so the JobSet) succeeds when node 0, the
// launcher, does.
func mpiPod(spec *plan.Launch, js string, job *batchv1.JobSpec) {
	if spec.Distributed.Framework != rankenv.MPI {
		return
	}
	pod := &job.Template.Spec
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: wire.MPIVolumeName, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: MPISecretName(js), DefaultMode: ptr.To(int32(0o444))},
	}})
	c := &pod.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: wire.MPIVolumeName, MountPath: wire.MPIMountPath, ReadOnly: true})
	job.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}}}
}

// mpiEnv is the rank pods' variables of an mpi step beyond the rank
// environment's: OpenMPI's rsh agent and the agents' base port.
func mpiEnv(d *plan.Distributed) []corev1.EnvVar {
	if d.Framework != rankenv.MPI {
		return nil
	}
	return []corev1.EnvVar{
		{Name: wire.EnvOMPIRshAgent, Value: wire.RshAgent},
		{Name: wire.EnvMPIAgentPort, Value: strconv.Itoa(wire.DefaultMPIAgentPort)},
	}
}
