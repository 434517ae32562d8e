package e2e

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	jobsetv1 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	jobsetclient "sigs.k8s.io/jobset/client-go/clientset/versioned"

	"pipectl.dev/pipectl/test/e2e/testbed"
)

// cluster is the test bed shared by the tests of this package.
var cluster *testbed.Cluster

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e: skipped in -short mode")
		return m.Run()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "pipectl-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cat, err := catalogue(ctx, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: image catalogue:", err)
		return 1
	}
	c, err := testbed.Start(ctx, testbed.Options{Dir: dir, Images: cat})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start test bed:", err)
		return 1
	}
	cluster = c
	if err := pushImages(ctx, c, cat); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: push images:", err)
		_ = c.Stop()
		return 1
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "e2e: test bed logs in %s\n", c.Logs)
	}
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		code = 1
	}
	if code == 0 {
		os.RemoveAll(dir)
	} else {
		// The logs stay; the pods' volumes (each holds a copy of pipectl,
		// ~176 MB) go, or a few failed runs fill the disk.
		vols, _ := filepath.Glob(filepath.Join(dir, "nodeagent", "pods", "*", "volumes"))
		for _, v := range vols {
			os.RemoveAll(v)
		}
	}
	return code
}

// setup returns the shared test bed, a fresh namespace and a context for one test.
func setup(t *testing.T) (*testbed.Cluster, string, context.Context) {
	t.Helper()
	if cluster == nil {
		t.Skip("no test bed (-short)")
	}
	cluster.DumpOnFailure(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return cluster, cluster.Namespace(t), ctx
}

// waitFor polls cond every 250 ms until it is true, fails the test at the deadline.
func waitFor(t *testing.T, ctx context.Context, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func podLogs(t *testing.T, ctx context.Context, ns, pod, container string) string {
	t.Helper()
	b, err := cluster.Client.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
	if err != nil {
		t.Fatalf("logs of %s/%s: %v", pod, container, err)
	}
	return string(b)
}

func jobPods(t *testing.T, ctx context.Context, ns, selector string) []corev1.Pod {
	t.Helper()
	pods, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

func TestIndexedJobRunsAsProcesses(t *testing.T) {
	c, ns, ctx := setup(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatalf("this test calls the API server from a pod with curl: %v", err)
	}
	if _, err := c.Client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "creds"},
		StringData: map[string]string{"password": "s3cr3t"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings"},
		Data:       map[string]string{"mode": "fast"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// A mount path the host does not have: it must exist in the sandbox only, and be gone
	// from the host once the pods are.
	scratch := fmt.Sprintf("/pipectl-e2e-scratch-%d", time.Now().UnixNano())
	script := `set -eu
echo "index=$JOB_COMPLETION_INDEX pod=$POD_NAME ns=$POD_NS ip=$POD_IP label=$INDEX_LABEL anno=$NOTE"
echo "secret=$PASSWORD mode=$MODE expanded=$EXPANDED"
echo "pwd=$(pwd) hostname=$(hostname)"
echo "scratch=$(cat ` + scratch + `/from-init)"
echo "sa-namespace=$(cat /var/run/secrets/kubernetes.io/serviceaccount/namespace)"
curl -sS --cacert /var/run/secrets/kubernetes.io/serviceaccount/ca.crt \
  -H "Authorization: Bearer $(cat /var/run/secrets/kubernetes.io/serviceaccount/token)" \
  "https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT/api/v1/namespaces/$POD_NS/pods" | grep -o 'system:serviceaccount:[a-z0-9-]*:default' | head -1 | sed 's/^/whoami=/'
`
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "indexed"},
		Spec: batchv1.JobSpec{
			CompletionMode: ptr(batchv1.IndexedCompletion),
			Completions:    ptr(int32(3)),
			Parallelism:    ptr(int32(3)),
			BackoffLimit:   ptr(int32(0)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"note": "hello"}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Volumes:       []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
					InitContainers: []corev1.Container{{
						Name: "init", Image: "ignored",
						Command:      []string{"sh", "-c", "echo written-by-init > " + scratch + "/from-init"},
						VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: scratch}},
					}},
					Containers: []corev1.Container{{
						Name: "main", Image: "ignored",
						Command:    []string{"sh", "-c", script},
						WorkingDir: "/pipectl-e2e-workdir",
						Env: []corev1.EnvVar{
							{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
							{Name: "POD_NS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
							{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
							{Name: "INDEX_LABEL", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['batch.kubernetes.io/job-completion-index']"}}},
							{Name: "NOTE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['note']"}}},
							{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "password"}}},
							{Name: "MODE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "mode"}}},
							{Name: "EXPANDED", Value: "$(MODE)-$(POD_IP)"},
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: scratch}},
					}},
				},
			},
		},
	}
	if _, err := c.Client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "job complete", func(ctx context.Context) (bool, error) {
		j, err := c.Client.BatchV1().Jobs(ns).Get(ctx, "indexed", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range j.Status.Conditions {
			if cond.Type == batchv1.JobFailed && cond.Status == corev1.ConditionTrue {
				return false, fmt.Errorf("job failed: %s", cond.Message)
			}
		}
		return j.Status.Succeeded == 3, nil
	})

	pods := jobPods(t, ctx, ns, "job-name=indexed")
	if len(pods) != 3 {
		t.Fatalf("job has %d pods, want 3", len(pods))
	}
	seen := map[string]bool{}
	ips := map[string]bool{}
	for _, p := range pods {
		// Each pod has a loopback address of its own (the node's is 127.0.0.1).
		if ip := net.ParseIP(p.Status.PodIP); ip == nil || !ip.IsLoopback() || p.Status.PodIP == "127.0.0.1" || ips[p.Status.PodIP] {
			t.Errorf("pod %s: address %q, want a loopback address of its own (other pods': %v)", p.Name, p.Status.PodIP, ips)
		}
		ips[p.Status.PodIP] = true
		if p.Spec.NodeName != testbed.NodeName {
			t.Errorf("pod %s ran on %q, want the plain node %s (the GPU node is tainted)", p.Name, p.Spec.NodeName, testbed.NodeName)
		}
		if p.Status.Phase != corev1.PodSucceeded {
			t.Errorf("pod %s phase %s, want Succeeded", p.Name, p.Status.Phase)
		}
		if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Terminated == nil ||
			p.Status.ContainerStatuses[0].State.Terminated.ExitCode != 0 {
			t.Errorf("pod %s container statuses %+v, want one terminated with exit code 0", p.Name, p.Status.ContainerStatuses)
		}
		idx := p.Labels["batch.kubernetes.io/job-completion-index"]
		seen[idx] = true
		logs := podLogs(t, ctx, ns, p.Name, "main")
		for _, want := range []string{
			fmt.Sprintf("index=%s pod=%s ns=%s ip=%s label=%s anno=hello", idx, p.Name, ns, p.Status.PodIP, idx),
			"secret=s3cr3t mode=fast expanded=fast-" + p.Status.PodIP,
			"pwd=/pipectl-e2e-workdir hostname=indexed-" + idx, // the Job controller sets spec.hostname
			"scratch=written-by-init",
			"sa-namespace=" + ns,
			"whoami=system:serviceaccount:" + ns + ":default",
		} {
			if !strings.Contains(logs, want) {
				t.Errorf("logs of %s lack %q; logs:\n%s", p.Name, want, logs)
			}
		}
	}
	for _, idx := range []string{"0", "1", "2"} {
		if !seen[idx] {
			t.Errorf("no pod with completion index %s (saw %v)", idx, seen)
		}
	}
	if _, err := os.Stat(scratch); err == nil {
		t.Logf("%s exists on the host while pods exist (expected: bubblewrap's mount point)", scratch)
	}

	// Deleting the job deletes its pods; the mount points made on the host go with them.
	if err := c.Client.BatchV1().Jobs(ns).Delete(ctx, "indexed", metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "pods and host mount points gone", func(ctx context.Context) (bool, error) {
		left := jobPods(t, ctx, ns, "job-name=indexed")
		_, serr := os.Stat(scratch)
		_, werr := os.Stat("/pipectl-e2e-workdir")
		return len(left) == 0 && os.IsNotExist(serr) && os.IsNotExist(werr), nil
	})
}

func TestJobSetPodsResolveEachOther(t *testing.T) {
	c, ns, ctx := setup(t)
	js, err := jobsetclient.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	// Each rank waits until both ranks' DNS names resolve, then prints them.
	script := `for name in js-workers-0-0.js js-workers-0-1.js; do
  for i in $(seq 100); do getent hosts $name >/dev/null && break; sleep 0.1; done
  echo "resolve $(getent hosts $name)"
done
echo "rank=$JOB_COMPLETION_INDEX hostname=$(hostname)"`
	set := &jobsetv1.JobSet{
		ObjectMeta: metav1.ObjectMeta{Name: "js"},
		Spec: jobsetv1.JobSetSpec{ReplicatedJobs: []jobsetv1.ReplicatedJob{{
			Name:     "workers",
			Replicas: 1,
			Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				CompletionMode: ptr(batchv1.IndexedCompletion),
				Completions:    ptr(int32(2)),
				Parallelism:    ptr(int32(2)),
				BackoffLimit:   ptr(int32(0)),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "rank", Image: "ignored", Command: []string{"sh", "-c", script}}},
				}},
			}},
		}}},
	}
	if _, err := js.JobsetV1alpha2().JobSets(ns).Create(ctx, set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "jobset completed", func(ctx context.Context) (bool, error) {
		got, err := js.JobsetV1alpha2().JobSets(ns).Get(ctx, "js", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Status != metav1.ConditionTrue {
				continue
			}
			switch jobsetv1.JobSetConditionType(cond.Type) {
			case jobsetv1.JobSetCompleted:
				return true, nil
			case jobsetv1.JobSetFailed:
				return false, fmt.Errorf("jobset failed: %s", cond.Message)
			}
		}
		return false, nil
	})
	pods := jobPods(t, ctx, ns, "jobset.sigs.k8s.io/jobset-name=js")
	if len(pods) != 2 {
		t.Fatalf("jobset has %d pods, want 2", len(pods))
	}
	// Each name resolves to its own pod's address, as on a pod network (two pods on one
	// address would be one host to MPI's hostfile).
	ip := map[string]string{}
	for _, p := range pods {
		ip[p.Labels["batch.kubernetes.io/job-completion-index"]] = p.Status.PodIP
	}
	if ip["0"] == ip["1"] || ip["0"] == "127.0.0.1" || ip["1"] == "127.0.0.1" {
		t.Errorf("the pods' addresses %v: want one of its own for each", ip)
	}
	for _, p := range pods {
		logs := podLogs(t, ctx, ns, p.Name, "rank")
		idx := p.Labels["batch.kubernetes.io/job-completion-index"]
		for _, want := range []string{
			fmt.Sprintf("resolve %-15s js-workers-0-0.js", ip["0"]),
			fmt.Sprintf("resolve %-15s js-workers-0-1.js", ip["1"]),
			"rank=" + idx + " hostname=js-workers-0-" + idx,
		} {
			if !strings.Contains(logs, want) {
				t.Errorf("logs of %s lack %q; logs:\n%s", p.Name, want, logs)
			}
		}
	}
	// Nothing changed on the host: its /etc/hosts does not know the pods.
	hosts, err := os.ReadFile("/etc/hosts")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(hosts), "js-workers-0-0") {
		t.Errorf("the host's /etc/hosts was changed:\n%s", hosts)
	}
}

func gpuPod(name string, tolerate bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "train", Image: "ignored", Command: []string{"sh", "-c", "echo trained"},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}},
			}},
		},
	}
	if tolerate {
		p.Spec.Tolerations = []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	}
	return p
}

func TestGPUPodNeedsToleration(t *testing.T) {
	c, ns, ctx := setup(t)
	pods := c.Client.CoreV1().Pods(ns)
	if _, err := pods.Create(ctx, gpuPod("no-toleration", false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, gpuPod("tolerates", true), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The tolerating pod runs on the GPU node: the taint and capacity are real.
	waitFor(t, ctx, "tolerating GPU pod succeeded", func(ctx context.Context) (bool, error) {
		p, err := pods.Get(ctx, "tolerates", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Status.Phase == corev1.PodFailed {
			return false, fmt.Errorf("pod failed: %+v", p.Status)
		}
		return p.Status.Phase == corev1.PodSucceeded, nil
	})
	p, err := pods.Get(ctx, "tolerates", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeName != testbed.GPUNodeName {
		t.Errorf("tolerating pod ran on %q, want %s", p.Spec.NodeName, testbed.GPUNodeName)
	}

	var msg string
	waitFor(t, ctx, "scheduler to report the pod unschedulable", func(ctx context.Context) (bool, error) {
		p, err := pods.Get(ctx, "no-toleration", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
				msg = cond.Message
				return true, nil
			}
		}
		return false, nil
	})
	for _, want := range []string{"0/2 nodes are available", "Insufficient nvidia.com/gpu", "untolerated taint"} {
		if !strings.Contains(msg, want) {
			t.Errorf("unschedulable message %q lacks %q", msg, want)
		}
	}
	events, err := c.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=no-toleration,reason=FailedScheduling"})
	if err != nil {
		t.Fatal(err)
	}
	if len(events.Items) == 0 {
		t.Errorf("no FailedScheduling event for the pod without toleration")
	}
	p, err = pods.Get(ctx, "no-toleration", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.Phase != corev1.PodPending || p.Spec.NodeName != "" {
		t.Errorf("pod without toleration: phase %s node %q, want Pending and unbound", p.Status.Phase, p.Spec.NodeName)
	}
}

func TestPodDeletionKillsProcesses(t *testing.T) {
	c, ns, ctx := setup(t)
	pods := c.Client.CoreV1().Pods(ns)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "sleeper"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "sleep", Image: "ignored", Command: []string{"sleep", "3600"}}},
		},
	}
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pid int
	waitFor(t, ctx, "pod running", func(ctx context.Context) (bool, error) {
		p, err := pods.Get(ctx, "sleeper", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Running == nil {
			return false, nil
		}
		pid, err = strconv.Atoi(strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "proc://"))
		return err == nil, err
	})
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err != nil {
		t.Fatalf("container process %d is not running: %v", pid, err)
	}
	if err := pods.Delete(ctx, "sleeper", metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(5))}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "pod gone and its process group killed", func(ctx context.Context) (bool, error) {
		_, err := pods.Get(ctx, "sleeper", metav1.GetOptions{})
		_, perr := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
		return err != nil && os.IsNotExist(perr), nil
	})
}

// A pod of an image in the catalogue sees the image's files, working directory and env;
// its own env wins, and the mount points go with the pod.
func TestImageCatalogue(t *testing.T) {
	c, ns, ctx := setup(t)
	pods := c.Client.CoreV1().Pods(ns)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "imaged"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "main", Image: scriptImage + ":v1", // matched without its tag
				Command: []string{"sh", "hello.sh"},
				Env:     []corev1.EnvVar{{Name: "MODE", Value: "container"}},
			}},
		},
	}
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "pod of a catalogued image to succeed", func(ctx context.Context) (bool, error) {
		p, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Status.Phase == corev1.PodFailed {
			return false, fmt.Errorf("pod failed: %s", podLogs(t, ctx, ns, pod.Name, "main"))
		}
		return p.Status.Phase == corev1.PodSucceeded, nil
	})
	want := "pwd=" + scriptDir + " greeting=from-image mode=container\n"
	if got := podLogs(t, ctx, ns, pod.Name, "main"); got != want {
		t.Errorf("logs = %q, want %q", got, want)
	}
	if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the image's mount point removed from the host", func(ctx context.Context) (bool, error) {
		_, err := os.Stat(scriptDir)
		return os.IsNotExist(err), nil
	})
}

func ptr[T any](v T) *T { return &v }
