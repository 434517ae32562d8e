package launcher

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/gang/progress"
)

// TestReportFilter: the progress reports of a log, however it is cut into
// writes, are taken out whole; the pod runtime's own lines ("pipectl: …")
// go to own; every other byte goes on in order (a line that starts like a
// marker, a refused report, a report too long to be one, a progress bar's
// \r); an unterminated report at the end is one.
func TestReportFilter(t *testing.T) {
	step := int64(7)
	rep := string(progress.Report{Rank: 1, Lines: 8, Step: &step}.Line())
	long := wire.ProgressMarker + `{"rank": 1, "x": "` + strings.Repeat("y", progress.MaxReportLine) + "\"}\n"
	log := "epoch 1\n" + rep + "#pipectl-pro and more\n10%\r" + rep + "50%\r\n" + wire.RuntimeLinePrefix + "checkpoint 1 kept\n" +
		wire.ProgressMarker + "refused\n" + rep + long + "#pip\n" + "#\n" + "pipectl:x\n" + rep + "pipectl\n" + wire.RuntimeLinePrefix + "\n" +
		"bye\n" + strings.TrimSuffix(rep, "\n")
	want := "epoch 1\n#pipectl-pro and more\n10%\r50%\r\n" + wire.ProgressMarker + "refused\n" + long + "#pip\n#\npipectl:x\npipectl\nbye\n"
	wantOwn := wire.RuntimeLinePrefix + "checkpoint 1 kept\n" + wire.RuntimeLinePrefix + "\n"
	for _, size := range []int{1, 2, 3, 7, 17, 64, 1 << 20} {
		var out, own strings.Builder
		var reports []string
		f := &reportFilter{next: &out, own: &own, report: func(line []byte) bool {
			if strings.HasSuffix(string(line), "refused") {
				return false
			}
			reports = append(reports, string(line))
			return true
		}}
		for p := log; len(p) > 0; {
			k := min(size, len(p))
			if n, err := f.Write([]byte(p[:k])); n != k || err != nil {
				t.Fatalf("Write: %d, %v", n, err)
			}
			p = p[k:]
		}
		f.flush()
		if got := out.String(); got != want {
			t.Errorf("writes of %d bytes: passed on %d bytes, want %d\n%.300q", size, len(got), len(want), got)
		}
		if got := own.String(); got != wantOwn {
			t.Errorf("writes of %d bytes: the runtime's lines %q, want %q", size, got, wantOwn)
		}
		if len(reports) != 5 {
			t.Errorf("writes of %d bytes: %d reports, want 5: %.300q", size, len(reports), reports)
		}
		for _, r := range reports {
			if r != strings.TrimSuffix(rep, "\n") {
				t.Errorf("writes of %d bytes: report %.300q, want %q", size, r, rep)
			}
		}
	}
}

// reportingLogs gives every pod one line, then only progress reports of
// its rank (every 50ms, for dur; step 1, 2, …), then nothing.
type reportingLogs struct{ dur time.Duration }

func (l reportingLogs) Open(ctx context.Context, _, pod, _ string) (io.ReadCloser, error) {
	r, w := io.Pipe()
	rank := int(pod[len(pod)-4] - '0') // <js>-rank-0-N-aA
	go func() {
		_, _ = w.Write([]byte("epoch 1\n"))
		end := time.Now().Add(l.dur)
		for step := int64(1); time.Now().Before(end); step++ {
			s := step
			_, _ = w.Write(progress.Report{Rank: rank, Lines: step, Step: &s, Last: map[string]float64{"loss": 1 / float64(step)}}.Line())
			sleep(ctx, 50*time.Millisecond)
		}
		<-ctx.Done()
		w.Close()
	}()
	return r, nil
}

// TestRunMetricsAreProgress: ranks that print nothing but report metrics
// (their pods' progress reports) are not stalled; once the reports stop,
// the gang is stalled StallTimeout later, each rank's state naming its
// last reported step and its last printed line. The reports are not shown.
func TestRunMetricsAreProgress(t *testing.T) {
	const timeout, reporting = 300 * time.Millisecond, 1500 * time.Millisecond
	f := newFakeCluster(t)
	l := f.launcher()
	l.Logs, l.StallTimeout = reportingLogs{dur: reporting}, timeout
	var got attempts
	l.Ended = got.ended
	js := testJobSet(2)
	done := start(context.Background(), l, js)
	jw, pw := f.nextJSWatch(t), f.nextPodWatch(t)
	jw.Modify(jobSetWith(js, 0, "", ""))
	running := time.Now()
	f.addPod(t, pw, makePod(js.Name, 0, 0, corev1.PodRunning))
	f.addPod(t, pw, makePod(js.Name, 1, 0, corev1.PodRunning))
	eventually(t, func() bool { return got.count() == 1 })
	took := got.at[0].Sub(running)
	t.Logf("stalled %s after the pods ran (reports for %s, stallTimeout %s)", took, reporting, timeout)
	if took < reporting+timeout-100*time.Millisecond {
		t.Errorf("stalled %s after the pods ran, while their ranks reported metrics for %s (stallTimeout %s)", took, reporting, timeout)
	}
	a := got.got[0]
	if a.Reason != record.ReasonStalled || len(a.Ranks) != 2 {
		t.Fatalf("gang attempt %+v, want stalled, 2 ranks", a)
	}
	for i, r := range a.Ranks {
		if r.Rank != i || r.LastLine != "epoch 1" || r.Step == nil || *r.Step < 10 {
			t.Errorf("rank state %+v, want rank %d, last line \"epoch 1\", a step of 10 or more", r, i)
		}
		if idle, err := time.ParseDuration(r.Idle); err != nil || idle < timeout || idle > timeout+time.Second {
			t.Errorf("rank %d idle %q, want the stall timeout or a little more", i, r.Idle)
		}
	}
	jw.Modify(jobSetWith(js, 1, "Completed", ""))
	wait(t, done)
	out := f.out.String()
	if strings.Contains(out, wire.ProgressMarker) || !strings.Contains(out, "[rank 1] epoch 1\n") {
		t.Errorf("rank log shows the progress reports or lacks the rank's line:\n%s", out)
	}
}

// seriesLogs gives each pod of attempt A two progress reports of its rank
// holding 5 points each, steps 10A+1 to 10A+10, then a line "done aA".
type seriesLogs struct{}

func (seriesLogs) Open(_ context.Context, _, pod, _ string) (io.ReadCloser, error) {
	rank, attempt := int(pod[len(pod)-4]-'0'), int64(pod[len(pod)-1]-'0')
	var b strings.Builder
	for r := range int64(2) {
		rep := progress.Report{Rank: rank, Lines: 5 * (r + 1)}
		for k := range int64(5) {
			step := 10*attempt + 5*r + k + 1
			rep.Points = append(rep.Points, progress.ReportPoint{Step: &step, Values: map[string]float64{"loss": float64(rank+1) / float64(step)}})
		}
		rep.Step, rep.Last = rep.Points[4].Step, rep.Points[4].Values
		b.Write(rep.Line())
	}
	fmt.Fprintf(&b, "done a%d\n", attempt)
	return io.NopCloser(strings.NewReader(b.String())), nil
}

// TestRunPublishesSeries: the points of the progress reports of every
// rank, attempt by attempt, make the series the launcher hands to Progress
// when Run ends, with their rank and gang attempt, as a local gang's.
func TestRunPublishesSeries(t *testing.T) {
	f := newFakeCluster(t)
	l := f.launcher()
	l.Logs = seriesLogs{}
	var mu sync.Mutex
	var got []record.Progress
	l.Progress = func(p record.Progress) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, p)
	}
	js := testJobSet(2)
	done := start(context.Background(), l, js)
	jw, pw := f.nextJSWatch(t), f.nextPodWatch(t)
	jw.Modify(jobSetWith(js, 0, "", ""))
	for attempt := range 2 {
		if attempt > 0 {
			jw.Modify(jobSetWith(js, int32(attempt), "", ""))
		}
		f.addPod(t, pw, makePod(js.Name, 0, attempt, corev1.PodRunning))
		f.addPod(t, pw, makePod(js.Name, 1, attempt, corev1.PodRunning))
		eventually(t, func() bool {
			return strings.Count(f.out.String(), fmt.Sprintf("done a%d\n", attempt)) == 2
		})
	}
	jw.Modify(jobSetWith(js, 1, "Completed", ""))
	if r := wait(t, done); r.err != nil {
		t.Fatalf("Run: %v", r.err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("Progress called %d times, want once (the end; nothing live within %s)", len(got), progress.PublishInterval)
	}
	p := got[0]
	if len(p.Points) != 40 || p.Lines != 40 || p.Malformed != 0 || p.Step == nil || *p.Step != 20 {
		t.Fatalf("series of %d points, %d lines, %d malformed, step %v; want 40, 40, 0, 20", len(p.Points), p.Lines, p.Malformed, p.Step)
	}
	seen := map[string]bool{}
	for _, pt := range p.Points {
		step := *pt.Step
		if want := int((step-1)/10) + 1; pt.Attempt != want || pt.Values["loss"] != float64(pt.Rank+1)/float64(step) {
			t.Errorf("point %+v: want attempt %d, loss (rank+1)/step", pt, want)
		}
		seen[fmt.Sprintf("%d/%d", pt.Rank, step)] = true
	}
	if len(seen) != 40 {
		t.Errorf("%d distinct (rank, step) points, want 40", len(seen))
	}
	if strings.Contains(f.out.String(), wire.ProgressMarker) {
		t.Errorf("the rank logs show progress reports:\n%s", f.out.String())
	}
}
