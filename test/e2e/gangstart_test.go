package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	jobsetv1 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// BenchmarkGangStart compares, at 8 and 64 rank pods, how long a gang takes
// to start through pipectl and as a plain JobSet. Through pipectl: the
// launcher pod is created (as Argo creates a distributed step's) and the
// time runs until every rank pod of the JobSet it creates has started. Plain:
// that very JobSet, under another run's name, is created directly (as with
// kubectl), and the time runs until every pod has started. They alternate;
// the ratio is pipectl's over plain's. Run with
//
//	go test -count=1 -run '^$' -bench BenchmarkGangStart -benchtime 3x -v .
func BenchmarkGangStart(b *testing.B) {
	if cluster == nil {
		b.Skip("no test bed (-short)")
	}
	for _, nodes := range []int{8, 64} {
		b.Run(fmt.Sprintf("ranks=%d", nodes), func(b *testing.B) {
			cluster.DumpOnFailure(b)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			l := newLab(b, cluster, cluster.Namespace(b), ctx)
			wf := l.compile(ctx, scalePipeline(b, b.TempDir(), nodes, 1, 10, -1, "      startupTimeout: 5m\n"))
			var viaPipectl, plain time.Duration
			for i := 0; i < b.N; i++ {
				run := fmt.Sprintf("gs-pipectl-%d", i)
				began := time.Now()
				if _, err := l.c.Client.CoreV1().Pods(l.ns).Create(ctx, wf.podOf(b, "train", run, nil, ""), metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
				js := l.ranksStarted(ctx, nodes)
				viaPipectl += time.Since(began)
				if p := l.waitPodEnded(ctx, "train-"+run); p.Status.Phase != corev1.PodSucceeded {
					b.Fatalf("launcher pod %s, want Succeeded; log:\n%s", p.Status.Phase, tail(l.logs(ctx, p.Name), 40))
				}
				l.noJobSetLeft(ctx, 2*time.Minute)

				// The same JobSet, as another run's.
				raw, err := json.Marshal(&jobsetv1.JobSet{
					ObjectMeta: metav1.ObjectMeta{Name: js.Name, Labels: js.Labels, Annotations: js.Annotations},
					Spec:       js.Spec,
				})
				if err != nil {
					b.Fatal(err)
				}
				var copied jobsetv1.JobSet
				if err := json.Unmarshal([]byte(strings.ReplaceAll(string(raw), run, fmt.Sprintf("gs-plain-%d", i))), &copied); err != nil {
					b.Fatal(err)
				}
				began = time.Now()
				if _, err := l.js.JobsetV1alpha2().JobSets(l.ns).Create(ctx, &copied, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
				l.ranksStarted(ctx, nodes)
				plain += time.Since(began)
				fg := metav1.DeletePropagationForeground
				if err := l.js.JobsetV1alpha2().JobSets(l.ns).Delete(ctx, copied.Name, metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
					b.Fatal(err)
				}
				l.noJobSetLeft(ctx, 2*time.Minute)
			}
			b.ReportMetric(viaPipectl.Seconds()/float64(b.N), "pipectl-s/op")
			b.ReportMetric(plain.Seconds()/float64(b.N), "jobset-s/op")
			b.ReportMetric(viaPipectl.Seconds()/plain.Seconds(), "ratio")
		})
	}
}

// ranksStarted waits until the namespace's JobSet has n pods whose
// containers started (running or already ended) and returns the JobSet.
func (l *lab) ranksStarted(ctx context.Context, n int) *jobsetv1.JobSet {
	l.tb.Helper()
	var js *jobsetv1.JobSet
	poll(l.tb, ctx, fmt.Sprintf("%d rank pods started", n), func(ctx context.Context) (bool, error) {
		pods, err := l.c.Client.CoreV1().Pods(l.ns).List(ctx, metav1.ListOptions{LabelSelector: jobsetv1.JobSetNameKey})
		if err != nil {
			return false, err
		}
		started := 0
		for _, p := range pods.Items {
			for _, cs := range p.Status.ContainerStatuses {
				if cs.State.Running != nil || cs.State.Terminated != nil {
					started++
					break
				}
			}
		}
		if started < n {
			return false, nil
		}
		jss, err := l.js.JobsetV1alpha2().JobSets(l.ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(jss.Items) != 1 {
			return false, err
		}
		js = &jss.Items[0]
		return true, nil
	})
	return js
}
