package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The sweep example through the real Argo controller, with real PyTorch:
// preprocess and holdout pods; trial[0..2], one launcher pod each (loop
// parallelism 1: one at a time), each creating a JobSet of its own whose 2
// rank pods run DDP on that iteration's learning rate; pick scoring the
// collected models; evaluate scoring the winner. Then a re-run reuses every
// step, trials included, from the cache.
func TestArgoSweep(t *testing.T) {
	a, ctx := newArgoLab(t)
	file := filepath.Join(images.repoRoot, "examples", "sweep", "pipeline.yaml")
	params := []string{"-p", "rows=3000", "-p", "epochs=1"}
	run := a.runArgoOK(t, ctx, file,
		[]string{"[trial[0]] [rank 0] ", "[trial[0]] [rank 1] ", "[trial[2]] [rank 1] ", "[pick] best: trial "},
		[]string{"pick Succeeded", "evaluate Succeeded", "accuracy = "},
		params...)

	var rec struct {
		Status string `json:"status"`
		Steps  []struct {
			Name     string          `json:"name"`
			Status   string          `json:"status"`
			ExitCode *int            `json:"exitCode"`
			Item     json.RawMessage `json:"item"`
			Outputs  []struct {
				Name  string  `json:"name"`
				Value *string `json:"value"`
				URI   string  `json:"uri"`
			} `json:"outputs"`
		} `json:"steps"`
	}
	js, _, code := a.pipectl(ctx, "runs", "get", run, "-o", "json")
	if err := json.Unmarshal([]byte(js), &rec); err != nil || code != 0 {
		t.Fatalf("runs get: %v (exit %d)\n%s", err, code, js)
	}
	var got []string
	bestLR := ""
	for _, s := range rec.Steps {
		line := s.Name + " " + s.Status + string(s.Item)
		if s.ExitCode != nil {
			line += fmt.Sprintf(" exit %d", *s.ExitCode)
		}
		for _, o := range s.Outputs {
			if strings.HasPrefix(s.Name, "trial[") && o.Name == "model" && !strings.Contains(o.URI, "/"+s.Name+"/model") {
				t.Errorf("%s's model is at %s, not under %s/", s.Name, o.URI, s.Name)
			}
			if s.Name == "pick" && o.Name == "best_lr" && o.Value != nil {
				bestLR = *o.Value
			}
		}
		got = append(got, line)
	}
	want := []string{
		"preprocess Succeeded exit 0",
		"holdout Succeeded exit 0",
		"trial Succeeded",
		"trial[0] Succeeded0.1 exit 0",
		"trial[1] Succeeded0.03 exit 0",
		"trial[2] Succeeded0.01 exit 0",
		"pick Succeeded exit 0",
		"evaluate Succeeded exit 0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || rec.Status != "Succeeded" {
		t.Errorf("run %s: status %s, steps:\n%s\nwant:\n%s", run, rec.Status, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The trials table: one row per learning rate, each model better than
	// chance; the winner is the best AUC.
	var trials []struct {
		Trial int     `json:"trial"`
		LR    float64 `json:"lr"`
		AUC   float64 `json:"auc"`
	}
	out, _, code := a.pipectl(ctx, "artifacts", "cat", run+"/pick/trials")
	if err := json.Unmarshal([]byte(out), &trials); err != nil || code != 0 || len(trials) != 3 {
		t.Fatalf("artifacts cat %s/pick/trials = %q (exit %d, %v)", run, out, code, err)
	}
	best := 0
	for i, tr := range trials {
		if tr.Trial != i || tr.LR != []float64{0.1, 0.03, 0.01}[i] || tr.AUC <= 0.5 {
			t.Errorf("trial %d = %+v: want lr %v and an AUC above 0.5 (chance)", i, tr, []float64{0.1, 0.03, 0.01}[i])
		}
		if tr.AUC > trials[best].AUC {
			best = i
		}
	}
	if bestLR != fmt.Sprint(trials[best].LR) {
		t.Errorf("pick's best_lr = %q, want %v (the best AUC of %+v)", bestLR, trials[best].LR, trials)
	}
	metrics, _, code := a.pipectl(ctx, "artifacts", "cat", run+"/evaluate/metrics")
	var m map[string]any
	if err := json.Unmarshal([]byte(metrics), &m); err != nil || code != 0 || m["auc"] == nil {
		t.Errorf("artifacts cat %s/evaluate/metrics = %q (exit %d, %v)", run, metrics, code, err)
	}

	// Each trial was a gang of its own: its launcher created the JobSet
	// RUN-trial-i, whose two ranks trained with that trial's rate.
	for i, lr := range []string{"0.1", "0.03", "0.01"} {
		step := fmt.Sprintf("trial[%d]", i)
		logs, _, code := a.pipectl(ctx, "logs", run, step)
		for _, want := range []string{
			fmt.Sprintf("created JobSet %s/%s-trial-%d: 2 rank pod(s)", a.ns, run, i),
			"[rank 0] ", "[rank 1] ",
		} {
			if code != 0 || !strings.Contains(logs, want) {
				t.Errorf("pipectl logs %s %s (exit %d) lacks %q:\n%s", run, step, code, want, logs)
			}
		}
		if !regexp.MustCompile(`lr[= ]` + regexp.QuoteMeta(lr) + `\b`).MatchString(logs) {
			t.Errorf("pipectl logs %s %s does not show lr %s:\n%s", run, step, lr, logs)
		}
	}

	// Again: every iteration is reused from its own cache entry: its
	// launcher creates no JobSet.
	again := a.runArgoOK(t, ctx, file, nil, []string{"pick Succeeded"}, params...)
	js, _, _ = a.pipectl(ctx, "runs", "get", again, "-o", "json")
	var rerun struct {
		Steps []struct {
			Name   string `json:"name"`
			Cached bool   `json:"cached"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(js), &rerun); err != nil {
		t.Fatalf("runs get %s: %v\n%s", again, err, js)
	}
	var cached []string
	for _, s := range rerun.Steps {
		if s.Cached {
			cached = append(cached, s.Name)
		}
	}
	if got, want := strings.Join(cached, " "), "preprocess holdout trial[0] trial[1] trial[2] pick evaluate"; got != want {
		t.Errorf("re-run %s: cached steps %q, want %q", again, got, want)
	}
	for i := range 3 {
		logs, _, _ := a.pipectl(ctx, "logs", again, fmt.Sprintf("trial[%d]", i))
		if strings.Contains(logs, "created JobSet") || !strings.Contains(logs, "cached: reusing the outputs of step trial["+fmt.Sprint(i)+"] of run "+run) {
			t.Errorf("re-run %s: trial[%d]'s log does not say it was reused from %s:\n%s", again, i, run, logs)
		}
	}
}
