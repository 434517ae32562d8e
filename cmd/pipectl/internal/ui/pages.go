package ui

import (
	"bytes"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/origin"
	"pipectl.dev/pipectl/pipeline/recordstore"
	"pipectl.dev/pipectl/pipeline/runview"
)

// templateFuncs are the functions the page templates use.
func templateFuncs() template.FuncMap {
	return template.FuncMap{
		"lower": strings.ToLower,
		"took": func(start time.Time, end *time.Time) string {
			if end == nil {
				return "running"
			}
			return duration(&start, end)
		},
		"bytes": runview.Bytes,
		"short": func(s string) string {
			s = strings.TrimPrefix(s, "sha256:")
			if len(s) > 12 {
				return s[:12]
			}
			return s
		},
		"iso": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"when": func(t time.Time) string {
			if t.IsZero() {
				return "-"
			}
			return t.UTC().Format("2006-01-02 15:04:05 UTC")
		},
		"where": func(on, ns string) string {
			switch {
			case on == "":
				return "local"
			case ns != "":
				return on + " · " + ns
			}
			return on
		},
		"runURL": func(id string) string { return "/runs/" + url.PathEscape(id) },
		"stepURL": func(run, step string) string {
			return "/runs/" + url.PathEscape(run) + "?step=" + url.QueryEscape(step)
		},
		"deref": func(p *string) string {
			if p == nil {
				return ""
			}
			return *p
		},
		"inc":       func(n int) int { return n + 1 },
		"color":     func(i int) int { return i % chartColors },
		"listChart": listChart,
		"loopURL":   loopURL,
		"nodeOf":    func(v runView, n Node) nodeCtx { return nodeCtx{Run: v, Node: n} },
		"num":       number,
		"label": func(s string, n int) string {
			if r := []rune(s); len(r) > n {
				return string(r[:n-1]) + "…"
			}
			return s
		},
	}
}

// loopURL is the page of run (its step selected shown) with the
// iterations of loop drawn (open) or folded, the other loops of expand as
// they are.
func loopURL(run, selected string, expand []string, loop string, open bool) string {
	q := url.Values{}
	if selected != "" {
		q.Set("step", selected)
	}
	for _, e := range expand {
		if e != loop {
			q.Add("expand", e)
		}
	}
	if open {
		q.Add("expand", loop)
	}
	return "/runs/" + url.PathEscape(run) + "?" + q.Encode()
}

// duration renders how long something ran: "" before it started or while
// it runs.
func duration(start, end *time.Time) string {
	if start == nil || start.IsZero() || end == nil {
		return ""
	}
	d := end.Sub(*start)
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// render executes the template name into a buffer, so that a failure never
// leaves half a page.
func (s *server) render(w http.ResponseWriter, name string, data any) {
	var buf bytes.Buffer
	if err := s.pages.ExecuteTemplate(&buf, name, data); err != nil {
		s.Log.Error("render", "template", name, "err", err)
		http.Error(w, "pipectl ui: cannot render "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	}
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(buf.Bytes())
}

type runsView struct {
	Root             string
	Runs             []runview.Summary
	All              int
	Pipelines        []string
	Statuses         []string
	Pipeline, Status string
	Live             bool
	Namespaces       map[string]string
}

func (s *server) runsPage(w http.ResponseWriter, r *http.Request) {
	all, err := s.Records.List(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	v := runsView{Root: s.Store.Root(), All: len(all), Pipeline: q.Get("pipeline"), Status: q.Get("status"),
		Statuses:   []string{record.StatusRunning, record.StatusSucceeded, record.StatusFailed, record.StatusCancelled},
		Namespaces: map[string]string{}}
	for _, rec := range all {
		if !slices.Contains(v.Pipelines, rec.Pipeline) {
			v.Pipelines = append(v.Pipelines, rec.Pipeline)
		}
		if rec.Status == record.StatusRunning {
			v.Live = true
		}
		v.Namespaces[rec.ID] = rec.Namespace
	}
	slices.Sort(v.Pipelines)
	v.Runs = filterRuns(all, v.Pipeline, v.Status)
	name := "runs"
	if q.Get("part") == "table" {
		name = "runs-table"
	}
	s.render(w, name, v)
}

type runView struct {
	Root  string
	Run   *record.Run
	Graph Graph
	Step  *stepView
	// Selected is the name of the step shown.
	Selected string
	Live     bool
	// Params are the run's params, sorted.
	Params [][2]string
	// Expand names the loop steps whose many iterations are drawn.
	Expand []string
}

// nodeCtx is what the template of a DAG node needs: the node and the page.
type nodeCtx struct {
	Run  runView
	Node Node
}

type stepView struct {
	*record.StepRecord
	Duration  string
	Artifacts []outputView
	Values    []record.OutputRecord
	LogURL    string
	// Inputs are the input artifacts the step read, each linked to the
	// step that made it (its lineage).
	Inputs []inputView
	// Charts are the curves of the metrics its ranks reported.
	Charts []*Chart
}

// inputView is an input artifact of a step, and its producer when it is
// an output of a run in this store.
type inputView struct {
	record.InputRecord
	Producer, URL string
}

// consumerView is a step that read an output's content.
type consumerView struct {
	Name, URL string
}

// maxReaders bounds the readers of an output a step page lists.
const maxReaders = 20

// stepURL is the page of a step of a run.
func stepURL(run, step string) string {
	return "/runs/" + url.PathEscape(run) + "?step=" + url.QueryEscape(step)
}

type outputView struct {
	record.OutputRecord
	// ReadBy are steps of any run that read this content (at most
	// maxReaders; More says how many more).
	ReadBy  []consumerView
	More    int
	URL     string
	Dir     bool
	Files   []fileView
	Preview *Preview
	// File is the directory output's file previewed (?file=OUTPUT/PATH).
	File    string
	Problem string
}

type fileView struct {
	Path    string
	Size    int64
	URL     string
	Preview string
}

// artifactURL is the download URL of an output, or of a file inside it.
func artifactURL(run, step, output, file string) string {
	u := "/api/runs/" + url.PathEscape(run) + "/artifacts/" + url.PathEscape(step) + "/" + url.PathEscape(output)
	if file != "" {
		parts := strings.Split(file, "/")
		for i, p := range parts {
			parts[i] = url.PathEscape(p)
		}
		u += "/" + strings.Join(parts, "/")
	}
	return u
}

// selectStep picks the step a run page shows: the one asked for, else a
// running one, else a failed one, else the last.
func selectStep(rec *record.Run, name string) *record.StepRecord {
	if st := rec.Step(name); st != nil {
		return st
	}
	for _, want := range []string{record.StatusRunning, record.StatusFailed} {
		for i := range rec.Steps {
			if rec.Steps[i].Status == want {
				return &rec.Steps[i]
			}
		}
	}
	if len(rec.Steps) == 0 {
		return nil
	}
	return &rec.Steps[len(rec.Steps)-1]
}

func (s *server) runPage(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.run(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	expand := map[string]bool{}
	for _, name := range q["expand"] {
		expand[name] = true
	}
	v := runView{Root: s.Store.Root(), Run: rec, Graph: LayoutRun(rec.Steps, s.stepInfos(r, rec.ID), expand),
		Live: rec.Status == record.StatusRunning || rec.Status == record.StatusPending, Expand: q["expand"]}
	for _, k := range slices.Sorted(maps.Keys(rec.Params)) {
		v.Params = append(v.Params, [2]string{k, rec.Params[k]})
	}
	if st := selectStep(rec, q.Get("step")); st != nil {
		v.Step, v.Selected = s.stepView(r, rec, st, q.Get("file")), st.Name
	}
	name := "run"
	if q.Get("part") == "live" {
		name = "run-live"
	}
	s.render(w, name, v)
}

// stepInfos are what the resolved pipeline of run says of its steps
// (none for a run without one): which are finally steps, which gangs.
func (s *server) stepInfos(r *http.Request, run string) map[string]StepInfo {
	res, err := origin.ReadResolved(r.Context(), s.Store, run)
	if err != nil {
		return nil
	}
	out := map[string]StepInfo{}
	for _, st := range res.Steps {
		i := StepInfo{Finally: st.Finally}
		if d := st.Distributed; d != nil && st.Loop == nil {
			i.Nodes, i.Procs = d.Nodes, d.ProcsPerNode
		}
		out[st.Name] = i
	}
	return out
}

func (s *server) stepView(r *http.Request, rec *record.Run, st *record.StepRecord, file string) *stepView {
	sv := &stepView{StepRecord: st, Duration: duration(st.Started, st.Finished),
		LogURL: "/api/runs/" + url.PathEscape(rec.ID) + "/logs/" + url.PathEscape(st.Name),
		Charts: progressCharts(st.Progress)}
	if in, err := recordstore.ReadInputs(r.Context(), s.Store, rec.ID, st.Name); err == nil {
		for _, i := range in.Inputs {
			iv := inputView{InputRecord: i}
			if key, err := artifacts.SplitURI(s.Store, i.URI); err == nil {
				if parts := strings.Split(key, "/"); len(parts) == 3 {
					iv.Producer, iv.URL = key, stepURL(parts[0], parts[1])
				}
			}
			sv.Inputs = append(sv.Inputs, iv)
		}
	}
	for _, o := range st.Outputs {
		if o.URI == "" {
			sv.Values = append(sv.Values, o)
			continue
		}
		ov := outputView{OutputRecord: o, URL: artifactURL(rec.ID, st.Name, o.Name, "")}
		if users, err := recordstore.ListConsumers(r.Context(), s.Store, o.SHA256); err == nil {
			for i, u := range users {
				if i == maxReaders {
					ov.More = len(users) - i
					break
				}
				ov.ReadBy = append(ov.ReadBy, consumerView{Name: u.Run + "/" + u.Step, URL: stepURL(u.Run, u.Step)})
			}
		}
		obj, err := findOutput(r.Context(), s.Store, rec, st.Name, o.Name, "")
		if err != nil {
			ov.Problem = err.Error()
			sv.Artifacts = append(sv.Artifacts, ov)
			continue
		}
		if obj.Dir {
			ov.Dir = true
			for _, f := range obj.Meta.Files {
				ov.Files = append(ov.Files, fileView{Path: f.Path, Size: f.Size,
					URL:     artifactURL(rec.ID, st.Name, o.Name, f.Path),
					Preview: "/runs/" + url.PathEscape(rec.ID) + "?step=" + url.QueryEscape(st.Name) + "&file=" + url.QueryEscape(o.Name+"/"+f.Path)})
			}
			if rest, ok := strings.CutPrefix(file, o.Name+"/"); ok {
				if fo, err := findOutput(r.Context(), s.Store, rec, st.Name, o.Name, rest); err == nil {
					obj, ov.File, ov.URL = fo, rest, artifactURL(rec.ID, st.Name, o.Name, rest)
				} else {
					ov.Problem = err.Error()
				}
			}
		}
		if !obj.Dir {
			if ov.Preview, err = s.preview(r.Context(), obj); err != nil {
				ov.Problem = err.Error()
			}
		}
		sv.Artifacts = append(sv.Artifacts, ov)
	}
	return sv
}

type compareView struct {
	Root string
	*Comparison
	IDs      []string
	Sections []cmpSection
	// Charts overlay the runs' curves, a line per run coloured as its
	// column's key.
	Charts []*Chart
}

func (s *server) comparePage(w http.ResponseWriter, r *http.Request) {
	c, recs, err := s.compare(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := compareView{Root: s.Store.Root(), Comparison: c, Sections: compareSections(c, recs),
		Charts: compareCharts(recs, c.Metrics)}
	for _, run := range c.Runs {
		v.IDs = append(v.IDs, run.ID)
	}
	s.render(w, "compare", v)
}
