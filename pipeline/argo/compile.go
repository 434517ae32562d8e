package argo

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/uris"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/plan"
)

// Names inside a compiled workflow (the pods' paths, env names and
// arguments are package wire's).
const (
	// EntryTemplate is the name of the DAG template.
	EntryTemplate = "main"
	// ExitTemplate is the name of the DAG template of the finally steps,
	// the workflow's onExit.
	ExitTemplate = "finally"
	// IterationInput is the template input carrying a loop iteration's
	// index ({{item}} of the task's withSequence or withParam).
	IterationInput = "iteration"
	// RunStatusInput and FailuresInput are the template inputs of a
	// finally step carrying {{workflow.status}} and {{workflow.failures}}.
	RunStatusInput = "run-status"
	FailuresInput  = "run-failures"
	// StepInput is the template input carrying the encoded plan.Wiring.
	StepInput = "step"
	// UpstreamInputPrefix starts the template inputs carrying upstream
	// output parameters: "in-" + the component input they feed.
	UpstreamInputPrefix = "in-"
	// SecretInputPrefix starts the template inputs carrying the name of a
	// Secret named by a step's output: "secret-" + the variable.
	SecretInputPrefix = "secret-"
	// DefaultLauncherServiceAccount runs launcher pods unless Options say otherwise.
	DefaultLauncherServiceAccount = "pipectl-launcher"
)

// Options are the compiler's settings: what the cluster looks like.
type Options struct {
	// Image is the pipectl image the init containers and launcher pods run.
	Image string
	// Artifacts is the artifact store root the pods use.
	Artifacts string
	// AllowNonS3 accepts an Artifacts root that is not s3:// (it works only
	// when every pod sees the same path).
	AllowNonS3 bool
	// Namespace is the workflow's namespace ("" leaves it to kubectl).
	Namespace string
	// ServiceAccount runs the step pods ("" for the namespace's default).
	ServiceAccount string
	// LauncherServiceAccount runs the launcher pods of distributed steps
	// (default DefaultLauncherServiceAccount).
	LauncherServiceAccount string
	// S3Secret names a Secret with keys AWS_ACCESS_KEY_ID and
	// AWS_SECRET_ACCESS_KEY, given to the pods by reference.
	S3Secret string
	// S3Endpoint and S3Region become AWS_ENDPOINT_URL_S3 and AWS_REGION.
	S3Endpoint, S3Region string
	// NoCache makes every step run (pipectl run --no-cache): no step reuses
	// an earlier step's outputs, each still records its own for later runs.
	NoCache bool
	// Params are name=value defaults for the workflow arguments, type-checked
	// against the pipeline's params.
	Params map[string]string
	// PodRuntime is how step pods get the pod runtime: wire.PodRuntimeCopy
	// ("" too: an init container copies it) or wire.PodRuntimeImageVolume
	// (the pipectl image mounted read-only as an image volume; the rank
	// pods of a distributed step still copy it).
	PodRuntime string
	// Images maps image references as written (Image, the steps' and
	// components' images) to the references the workflow names instead:
	// their digests, NAME@sha256:… (from package images; the compiler
	// makes no registry calls). A reference not in it is used as written.
	Images map[string]string
	// ResumeFrom is the run a rerun re-runs: its distributed steps restore
	// that run's last checkpoint of the step while the new run has none of
	// its own (the launcher's --resume-from; "" for none).
	ResumeFrom string
}

// Compile turns a loaded pipeline into an Argo Workflow. It reads nothing
// but its arguments and changes neither.
func Compile(p *pipeline.Pipeline, opts Options) (*wfv1.Workflow, error) {
	return compile(p, opts, false)
}

// compile is Compile; cron says the workflow is a CronWorkflow's.
func compile(p *pipeline.Pipeline, opts Options, cron bool) (*wfv1.Workflow, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	opts.Image = pin(opts.Images, opts.Image)
	args, err := arguments(p, opts.Params)
	if err != nil {
		return nil, err
	}
	c := &compiler{p: p, opts: opts, cron: cron, keys: map[string]int{}, names: map[string]bool{EntryTemplate: true, ExitTemplate: true}}
	c.taskNames()
	var errs []error
	var tasks, final []wfv1.DAGTask
	steps, err := stepTasks(p, c.tasks)
	if err != nil {
		return nil, err
	}
	c.steps = steps
	for i := range p.Steps {
		t, err := c.step(&p.Steps[i])
		if err != nil {
			errs = append(errs, fmt.Errorf("step %s: %w", p.Steps[i].Name, err))
			continue
		}
		if p.Steps[i].Finally {
			final = append(final, t)
		} else {
			tasks = append(tasks, t)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	name := p.Metadata.Name
	labels := map[string]string{}
	for k, v := range p.Metadata.Labels {
		labels[k] = v
	}
	labels[wire.LabelPipeline] = name
	if err := plan.CheckLabels("label", labels); err != nil {
		return nil, fmt.Errorf("metadata.labels: %w", err)
	}
	templates := []wfv1.Template{{Name: EntryTemplate, DAG: &wfv1.DAGTemplate{Tasks: tasks, FailFast: new(false), Target: c.target(tasks)}}}
	onExit := ""
	if len(final) > 0 {
		templates = append(templates, wfv1.Template{Name: ExitTemplate, DAG: &wfv1.DAGTemplate{Tasks: final, FailFast: new(false), Target: c.target(final)}})
		onExit = ExitTemplate
	}
	wf := &wfv1.Workflow{
		TypeMeta: metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow"},
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: name + "-",
			Namespace:    opts.Namespace,
			Labels:       labels,
			Annotations:  map[string]string{wire.AnnotationSteps: steps},
		},
		Spec: wfv1.WorkflowSpec{
			Entrypoint:         EntryTemplate,
			OnExit:             onExit,
			Arguments:          args,
			ServiceAccountName: opts.ServiceAccount,
			Volumes:            c.volumes(),
			PodMetadata: &wfv1.Metadata{Labels: map[string]string{
				wire.LabelPipeline: name,
				wire.LabelRun:      "{{workflow.name}}",
			}},
			WorkflowMetadata: &wfv1.WorkflowMetadata{LabelsFrom: map[string]wfv1.LabelValueFrom{
				wire.LabelRun: {Expression: "workflow.name"},
			}},
			// FailFast off: as locally, a failed step skips its dependents
			// while independent branches still start and finish.
			Templates: append(templates, c.templates...),
		},
	}
	if err := CheckSize(wf); err != nil {
		return nil, err
	}
	return wf, nil
}

// Check reports what is wrong with the options, before anything is compiled
// or shipped.
func (o *Options) Check() error {
	var errs []error
	if o.Image == "" {
		errs = append(errs, errors.New("no pipectl image (want --image)"))
	}
	switch {
	case o.Artifacts == "":
		errs = append(errs, errors.New("no artifact store for the pods (want --artifacts s3://bucket/prefix)"))
	case !strings.HasPrefix(o.Artifacts, "s3://") && !o.AllowNonS3:
		errs = append(errs, fmt.Errorf("artifact store %q is not s3://: pods on different nodes would not share it (want --artifacts s3://bucket/prefix, or --allow-non-s3 if every pod mounts that path)", o.Artifacts))
	}
	for _, f := range []struct{ flag, v string }{
		{"--image", o.Image}, {"--artifacts", o.Artifacts}, {"--s3-endpoint", o.S3Endpoint}, {"--s3-region", o.S3Region},
	} {
		if strings.Contains(f.v, "{{") || strings.Contains(f.v, "$") {
			errs = append(errs, fmt.Errorf("%s %q: must not contain {{ or $ (Argo and Kubernetes would expand them)", f.flag, uris.RedactURL(f.v)))
		}
	}
	// The pods reach the store as pipectl does; credentials in a URL would
	// be written into the workflow in plain text.
	if o.S3Endpoint != "" {
		if _, err := uris.ParseS3Endpoint(o.S3Endpoint); err != nil {
			errs = append(errs, fmt.Errorf("--s3-endpoint: %w", err))
		}
	}
	if u, err := url.Parse(o.Artifacts); err == nil && u.User != nil {
		errs = append(errs, fmt.Errorf("--artifacts %q holds credentials: the pods get them from --s3-secret, never from the root", uris.RedactURL(o.Artifacts)))
	}
	for _, f := range []struct{ flag, v string }{
		{"--namespace", o.Namespace}, {"--service-account", o.ServiceAccount},
		{"--launcher-service-account", o.LauncherServiceAccount}, {"--s3-secret", o.S3Secret},
	} {
		if f.v == "" {
			continue
		}
		if msgs := validation.IsDNS1123Subdomain(f.v); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s %q: %s", f.flag, f.v, strings.Join(msgs, "; ")))
		}
	}
	if o.LauncherServiceAccount == "" {
		o.LauncherServiceAccount = DefaultLauncherServiceAccount
	}
	switch o.PodRuntime {
	case "", wire.PodRuntimeCopy, wire.PodRuntimeImageVolume:
	default:
		errs = append(errs, fmt.Errorf("--pod-runtime %q: want %s or %s", o.PodRuntime, wire.PodRuntimeCopy, wire.PodRuntimeImageVolume))
	}
	return errors.Join(errs...)
}

// arguments returns the workflow arguments: every param, with its value
// when it has one (a param without a default needs one at submit).
func arguments(p *pipeline.Pipeline, overrides map[string]string) (wfv1.Arguments, error) {
	// Type-check the overrides and resolve defaults, leaving params without
	// any value to be given at submit.
	q := *p
	q.ParamOrder = nil
	for _, name := range p.ParamOrder {
		if _, given := overrides[name]; given || p.Params[name].Default.Kind != 0 {
			q.ParamOrder = append(q.ParamOrder, name)
		}
	}
	values, err := q.ResolveParams(overrides)
	if err != nil {
		return wfv1.Arguments{}, err
	}
	var args wfv1.Arguments
	for _, name := range p.ParamOrder {
		prm := wfv1.Parameter{Name: name}
		if v, ok := values[name]; ok {
			prm.Value = wfv1.AnyStringPtr(wire.EncodeValue(v))
		}
		if d := p.Params[name].Description; d != "" && wire.EncodeValue(d) == d {
			prm.Description = wfv1.AnyStringPtr(d)
		}
		args.Parameters = append(args.Parameters, prm)
	}
	return args, nil
}

// compiler holds the state of one Compile.
type compiler struct {
	p    *pipeline.Pipeline
	opts Options
	// cron: the workflow is a CronWorkflow's (CompileCron).
	cron bool
	// tasks maps step names to task names.
	tasks map[string]string
	// templates are the leaf templates, in order of first use.
	templates []wfv1.Template
	// keys maps a template's key to its index in templates.
	keys map[string]int
	// names are the template names in use.
	names map[string]bool
	// steps is the value of AnnotationSteps (finally steps read it).
	steps string
}

// taskNames names the DAG tasks: the step names, with "step-" before a name
// that starts with a digit.
func (c *compiler) taskNames() { c.tasks = TaskNames(c.p) }

// TaskNames maps each step of p to its DAG task's name: the step's name, or
// "step-" and the name when it starts with a digit (which Argo's enhanced
// depends does not allow), with '-' for the '.' of a nested pipeline's step
// (OUTER.INNER, see the pipeline package doc; Argo task names hold no '.'), made
// unique.
func TaskNames(p *pipeline.Pipeline) map[string]string {
	tasks := map[string]string{}
	used := map[string]bool{}
	for _, s := range p.Steps {
		used[s.Name] = true
	}
	for _, s := range p.Steps {
		name := strings.ReplaceAll(s.Name, pipeline.NestedSep, "-")
		if name != "" && name[0] >= '0' && name[0] <= '9' {
			name = "step-" + name
		}
		if name != s.Name {
			name = unique(name, used)
			used[name] = true
		}
		tasks[s.Name] = name
	}
	return tasks
}

// unique returns base, or base-2, base-3... whichever is not in used.
func unique(base string, used map[string]bool) string {
	if !used[base] {
		return base
	}
	for i := 2; ; i++ {
		if n := fmt.Sprintf("%s-%d", base, i); !used[n] {
			return n
		}
	}
}

// step compiles one step into its task, adding its template if new.
func (c *compiler) step(s *pipeline.Step) (wfv1.DAGTask, error) {
	sp, err := plan.Build(c.p, s.Name)
	if err != nil {
		return wfv1.DAGTask{}, err
	}
	sp.Image = pin(c.opts.Images, sp.Image)
	stepArg, err := wire.Encode(sp.Wiring)
	if err != nil {
		return wfv1.DAGTask{}, err
	}
	tmpl, err := c.template(sp)
	if err != nil {
		return wfv1.DAGTask{}, err
	}
	task := wfv1.DAGTask{Name: c.tasks[s.Name], Template: tmpl}
	task.Arguments.Parameters = append(task.Arguments.Parameters, wfv1.Parameter{Name: StepInput, Value: wfv1.AnyStringPtr(stepArg)})
	if sp.Loop != nil && sp.Loop.Parallelism == 0 {
		if err := c.loop(&task, sp, false); err != nil {
			return wfv1.DAGTask{}, err
		}
	}
	if sp.Finally {
		task.Arguments.Parameters = append(task.Arguments.Parameters,
			wfv1.Parameter{Name: RunStatusInput, Value: wfv1.AnyStringPtr("{{workflow.status}}")},
			wfv1.Parameter{Name: FailuresInput, Value: wfv1.AnyStringPtr("{{workflow.failures}}")})
	}
	for _, in := range sp.Wiring.UpstreamInputs() {
		ref := sp.Wiring.Upstream[in]
		task.Arguments.Parameters = append(task.Arguments.Parameters, wfv1.Parameter{
			Name:  UpstreamInputPrefix + in,
			Value: wfv1.AnyStringPtr(fmt.Sprintf("{{tasks.%s.outputs.parameters.%s}}", c.tasks[ref.Step], ref.Output)),
		})
	}
	if sp.Distributed == nil {
		for _, s := range secretSteps(&sp.Pod) {
			b := s.Ref()
			task.Arguments.Parameters = append(task.Arguments.Parameters, wfv1.Parameter{
				Name:  SecretInputPrefix + s.Env,
				Value: wfv1.AnyStringPtr(fmt.Sprintf("{{tasks.%s.outputs.parameters.%s}}", c.tasks[b.Step], b.Output)),
			})
		}
	}
	task.Depends = c.depends(sp)
	if sp.When != nil {
		if task.When, err = c.when(sp.When); err != nil {
			return wfv1.DAGTask{}, fmt.Errorf("when: %w", err)
		}
	}
	if sp.Loop != nil && sp.Loop.Parallelism > 0 {
		return c.bounded(task, sp)
	}
	return task, nil
}

// loop makes task run once per item of the step's loop: withSequence over
// the items' indexes for a literal list (its length known now), else
// withParam over the indexes of the JSON list the parameter or upstream
// output holds, computed by an expression; each iteration gets its index
// as the template input IterationInput and exec evaluates the items itself
// (values as written: Argo never re-encodes an item). In a bounded loop's
// template (wrapped), the upstream output is the template's input.
func (c *compiler) loop(task *wfv1.DAGTask, sp *plan.Step, wrapped bool) error {
	items := sp.Wiring.Items
	if len(items) != 1 {
		return fmt.Errorf("loop items: expected one part, got %d", len(items))
	}
	var list string
	switch part := items[0]; {
	case part.Product != nil:
		count, expr, err := c.productCount(sp, part.Product, wrapped)
		if err != nil {
			return err
		}
		if expr == "" {
			task.WithSequence = &wfv1.Sequence{Count: ptr(intstr.FromInt(count))}
			break
		}
		task.WithParam = "{{=toJson(sprig.until(" + strconv.Itoa(count) + " * " + expr + "))}}"
	case part.Param != "":
		list = decoded("workflow.parameters['" + part.Param + "']")
	case part.Upstream != "":
		list = c.upstreamValue(sp, part.Upstream, wrapped)
	default:
		all, err := pipeline.Items(part.Lit)
		if err != nil {
			return fmt.Errorf("loop items: %v", err)
		}
		task.WithSequence = &wfv1.Sequence{Count: ptr(intstr.FromInt(len(all)))}
	}
	if list != "" {
		task.WithParam = "{{=toJson(sprig.until(len(sprig.fromJson(" + list + "))))}}"
	}
	task.Arguments.Parameters = append(task.Arguments.Parameters, wfv1.Parameter{Name: IterationInput, Value: wfv1.AnyStringPtr("{{item}}")})
	return nil
}

// upstreamValue is the expression of the decoded value of the upstream
// output the step gets as input in: the task's output, or in a bounded
// loop's template (wrapped) the template's input.
func (c *compiler) upstreamValue(sp *plan.Step, in string, wrapped bool) string {
	if wrapped {
		return decoded("inputs.parameters['" + UpstreamInputPrefix + in + "']")
	}
	ref := sp.Wiring.Upstream[in]
	return decoded("tasks['" + c.tasks[ref.Step] + "'].outputs.parameters['" + ref.Output + "']")
}

// productCount is the number of items of a loop's product (see
// pipeline.ProductItems): count times the value of expr, an expression of
// Argo's (expr "" when every list is known now). The lists of an earlier
// list's item make a forest under the lists of their own: a tree under a
// written list is counted now; one under a param or an upstream output is
// sum(map(LIST, {CHILD * ...})) over the items of its list, each child a
// field of the item (#), len(LIST) at a leaf.
func (c *compiler) productCount(sp *plan.Step, lists []plan.ProductList, wrapped bool) (int, string, error) {
	children := map[string][]int{}
	root := make([]string, len(lists)) // the name of each list's tree
	var roots []int
	for k, l := range lists {
		if len(l.List) != 1 {
			return 0, "", fmt.Errorf("loop product list %s: expected one part, got %d", l.Name, len(l.List))
		}
		it := l.List[0].Item
		if it == nil {
			root[k] = l.Name
			roots = append(roots, k)
			continue
		}
		outer, _, _ := strings.Cut(it.Field, ".")
		j := slices.IndexFunc(lists[:k], func(o plan.ProductList) bool { return o.Name == outer })
		if j < 0 {
			return 0, "", fmt.Errorf("loop product list %s: {{item.%s}} names no earlier list", l.Name, it.Field)
		}
		children[outer] = append(children[outer], k)
		root[k] = root[j]
	}
	// The trees under written lists, counted now.
	var known []pipeline.ProductList
	var given [][]string
	for k, l := range lists {
		lp := l.List[0]
		r := lists[slices.IndexFunc(lists, func(o plan.ProductList) bool { return o.Name == root[k] })].List[0]
		if lp.Item == nil && (lp.Param != "" || lp.Upstream != "") || r.Param != "" || r.Upstream != "" {
			continue
		}
		pl := pipeline.ProductList{Name: l.Name}
		var items []string
		if lp.Item != nil {
			pl.Item, pl.Field = true, lp.Item.Field
		} else {
			var err error
			if items, err = pipeline.Items(lp.Lit); err != nil {
				return 0, "", fmt.Errorf("loop product list %s: %v", l.Name, err)
			}
		}
		known, given = append(known, pl), append(given, items)
	}
	all, err := pipeline.ProductItems(known, given)
	if err != nil {
		return 0, "", fmt.Errorf("loop product: %v", err)
	}
	count := len(all)
	// tree is the count of list k's tree whose list is the value of x.
	var tree func(k int, x string) string
	tree = func(k int, x string) string {
		kids := children[lists[k].Name]
		if len(kids) == 0 {
			return "len(" + x + ")"
		}
		factors := make([]string, len(kids))
		for i, kid := range kids {
			field := lists[kid].List[0].Item.Field
			elem := "#"
			if _, path, ok := strings.Cut(field, "."); ok {
				for _, f := range strings.Split(path, ".") {
					elem += "[" + exprString(f) + "]"
				}
			}
			// A field holding a string is the JSON list it holds, as
			// {{item.FIELD}} gives it.
			factors[i] = tree(kid, "(type("+elem+") == 'string' ? sprig.fromJson("+elem+") : "+elem+")")
		}
		return "sum(map(" + x + ", {" + strings.Join(factors, " * ") + "}))"
	}
	var exprs []string
	for _, k := range roots {
		lp := lists[k].List[0]
		switch {
		case lp.Param != "":
			exprs = append(exprs, tree(k, "sprig.fromJson("+decoded("workflow.parameters['"+lp.Param+"']")+")"))
		case lp.Upstream != "":
			exprs = append(exprs, tree(k, "sprig.fromJson("+c.upstreamValue(sp, lp.Upstream, wrapped)+")"))
		}
	}
	return count, strings.Join(exprs, " * "), nil
}

// exprString is s as a string literal of Argo's expressions.
func exprString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// templateKey identifies a leaf template: steps with equal keys share one.
type templateKey struct {
	Component string    `json:"component"`
	Image     string    `json:"image"`
	Pod       *plan.Pod `json:"pod,omitempty"`
	Launch    string    `json:"launch,omitempty"`
	Retries   int       `json:"retries,omitempty"`
	Timeout   int64     `json:"timeout,omitempty"`
	Params    []string  `json:"params,omitempty"`
	Upstream  []string  `json:"upstream,omitempty"`
	Cache     string    `json:"cache"`
	Loop      bool      `json:"loop,omitempty"`
	Finally   bool      `json:"finally,omitempty"`
	// ScheduledTime: the step reads {{run.scheduledTime}} (--scheduled-time).
	ScheduledTime bool `json:"scheduledTime,omitempty"`
	// PodSpecPatch sets the resources given at run time (podSpecPatch).
	PodSpecPatch string `json:"podSpecPatch,omitempty"`
}

// template returns the name of the step's template, adding it if new.
func (c *compiler) template(sp *plan.Step) (string, error) {
	comp := sp.Component
	if sp.Image == "" {
		return "", fmt.Errorf("component %s has no image: set image: in its spec, or in the step, to run it on a cluster", comp.Name)
	}
	if msg := pipeline.ImageProblem(sp.Image); msg != "" {
		return "", fmt.Errorf("component %s: image %q: %s", comp.Name, sp.Image, msg)
	}
	compArg, err := wire.Encode(comp)
	if err != nil {
		return "", err
	}
	params := sp.Wiring.ParamNames()
	if sp.Distributed != nil {
		params = launcherParams(sp)
	}
	key := templateKey{Component: compArg, Image: sp.Image, Retries: sp.Retries, Params: params, Upstream: sp.Wiring.UpstreamInputs(),
		Cache: string(wire.StepCacheMode(sp.Cache, c.opts.NoCache)), Loop: sp.Loop != nil, Finally: sp.Finally,
		ScheduledTime: sp.Wiring.ReadsRun(pipeline.RunScheduledTime)}
	if sp.Timeout.Duration > 0 {
		key.Timeout = int64((sp.Timeout.Duration + time.Second - 1) / time.Second)
	}
	launch := sp.Distributed != nil
	if launch {
		if key.Launch, err = wire.Encode(c.launch(sp)); err != nil {
			return "", err
		}
	} else {
		key.Pod = &sp.Pod
		if key.PodSpecPatch, err = podSpecPatch(sp); err != nil {
			return "", fmt.Errorf("step %s: %w", sp.Name, err)
		}
	}
	kb, err := json.Marshal(key)
	if err != nil {
		return "", err
	}
	if i, ok := c.keys[string(kb)]; ok {
		return c.templates[i].Name, nil
	}
	base := comp.Name
	if launch {
		base += "-launcher"
	}
	name := unique(base, c.names)
	c.names[name] = true
	t := wfv1.Template{Name: name}
	t.Inputs.Parameters = append(t.Inputs.Parameters, wfv1.Parameter{Name: StepInput})
	for _, in := range key.Upstream {
		t.Inputs.Parameters = append(t.Inputs.Parameters, wfv1.Parameter{Name: UpstreamInputPrefix + in})
	}
	if !launch {
		for _, s := range secretSteps(&sp.Pod) {
			t.Inputs.Parameters = append(t.Inputs.Parameters, wfv1.Parameter{Name: SecretInputPrefix + s.Env})
		}
	}
	if key.Loop {
		t.Inputs.Parameters = append(t.Inputs.Parameters, wfv1.Parameter{Name: IterationInput})
	}
	if key.Finally {
		t.Inputs.Parameters = append(t.Inputs.Parameters, wfv1.Parameter{Name: RunStatusInput}, wfv1.Parameter{Name: FailuresInput})
	}
	outDir := wire.OutputParamsDir
	if launch {
		outDir = wire.LauncherOutputParamsDir
	}
	for _, out := range comp.Outputs {
		if !components.IsArtifact(out.Type) {
			t.Outputs.Parameters = append(t.Outputs.Parameters, wfv1.Parameter{Name: out.Name, ValueFrom: &wfv1.ValueFrom{Path: outDir + "/" + out.Name}})
		}
	}
	if sp.Retries > 0 {
		t.RetryStrategy = &wfv1.RetryStrategy{Limit: ptr(intstr.FromInt32(int32(sp.Retries)))}
	}
	if key.Timeout > 0 {
		t.ActiveDeadlineSeconds = ptr(intstr.FromInt(int(key.Timeout)))
	}
	args := c.execArgs(launch, params, key.Upstream)
	args.Cache = key.Cache
	if key.Loop {
		args.Iteration = "{{inputs.parameters." + IterationInput + "}}"
	}
	if key.Finally {
		args.ArgoStatus = "{{inputs.parameters." + RunStatusInput + "}}"
		args.ArgoFailures = "{{inputs.parameters." + FailuresInput + "}}"
		args.ArgoSteps = base64.StdEncoding.EncodeToString([]byte(c.steps))
	}
	if key.ScheduledTime {
		args.ScheduledTime = c.scheduledTime()
	}
	args.Component = compArg
	if launch {
		args.Distributed, args.ResumeFrom = key.Launch, c.opts.ResumeFrom
		c.launcherPod(&t, args)
	} else {
		args.Image = sp.Image
		c.stepPod(&t, sp.Image, &sp.Pod, args)
		t.PodSpecPatch = key.PodSpecPatch
	}
	c.keys[string(kb)] = len(c.templates)
	c.templates = append(c.templates, t)
	return name, nil
}

// Launch returns what the launcher of a distributed step gets as
// --distributed: the step's Distributed plan with the cluster settings of
// opts. The step must be distributed.
func Launch(sp *plan.Step, opts Options) (*plan.Launch, error) {
	if sp.Distributed == nil {
		return nil, fmt.Errorf("step %s is not distributed", sp.Name)
	}
	if err := opts.Check(); err != nil {
		return nil, err
	}
	opts.Image = pin(opts.Images, opts.Image)
	pinned := *sp
	pinned.Image = pin(opts.Images, sp.Image)
	c := &compiler{opts: opts}
	return c.launch(&pinned), nil
}

func (c *compiler) launch(sp *plan.Step) *plan.Launch {
	return &plan.Launch{
		Version: wire.LaunchVersion, Pipeline: sp.Pipeline, Image: sp.Image, PipectlImage: c.opts.Image,
		Timeout: sp.Timeout, Distributed: *sp.Distributed,
		ServiceAccountName: c.opts.ServiceAccount, Env: c.storeEnv(),
	}
}

// LauncherArgs are the arguments, but --distributed, of the launcher pod
// of distributed step sp of p in run `run` (iteration: a loop iteration's
// index, or "") with the pipeline's parameter values: what the compiled
// workflow's pod gets once Argo filled in its placeholders. Upstream
// output parameters, known only as the run runs, stand as
// "<tasks.TASK.outputs.parameters.OUTPUT>".
func LauncherArgs(p *pipeline.Pipeline, sp *plan.Step, run, iteration string, values map[string]string) (wire.Args, error) {
	args := wire.Args{Run: run, Iteration: iteration}
	var err error
	if args.Component, err = wire.Encode(sp.Component); err != nil {
		return args, err
	}
	if args.Step, err = wire.Encode(sp.Wiring); err != nil {
		return args, err
	}
	params, upstream := map[string]string{}, map[string]string{}
	for _, name := range launcherParams(sp) {
		params[name] = values[name]
	}
	tasks := TaskNames(p)
	for _, in := range sp.Wiring.UpstreamInputs() {
		ref := sp.Wiring.Upstream[in]
		upstream[in] = "<tasks." + tasks[ref.Step] + ".outputs.parameters." + ref.Output + ">"
	}
	args.Params, args.Upstream = wire.Values(params), wire.Values(upstream)
	return args, nil
}

// launcherParams are the params the launcher of distributed step sp is
// given: the wiring's, and those that name its rank pods' Secrets, which
// it names (launcher.FromWire). Sorted, each once.
func launcherParams(sp *plan.Step) []string {
	return slices.Compact(slices.Sorted(slices.Values(append(sp.Wiring.ParamNames(), sp.SecretParams()...))))
}

// execArgs are the arguments exec (and launch) get from every template:
// the run, the work and output directories, the step, the parameters and
// the upstream output parameters.
func (c *compiler) execArgs(launcher bool, params, upstream []string) wire.Args {
	a := wire.Args{
		Run: "{{workflow.name}}", WorkDir: wire.WorkDir, OutputParams: wire.OutputParamsDir,
		Step: "{{inputs.parameters." + StepInput + "}}",
	}
	if launcher {
		a.WorkDir, a.OutputParams = wire.LauncherWorkDir, wire.LauncherOutputParamsDir
	}
	for _, p := range params {
		a.Params = append(a.Params, p+"={{workflow.parameters."+p+"}}")
	}
	for _, in := range upstream {
		a.Upstream = append(a.Upstream, in+"={{inputs.parameters."+UpstreamInputPrefix+in+"}}")
	}
	return a
}

// secretName is the name a step's pod gives a Secret named by a param (the
// workflow parameter's value) or a step's output (the template's input
// SecretInputPrefix+ENV, the task's argument that output): Argo fills it in.
func secretName(s pipeline.Secret) string {
	if b := s.Ref(); b.Param != "" {
		return "{{workflow.parameters." + b.Param + "}}"
	}
	return "{{inputs.parameters." + SecretInputPrefix + s.Env + "}}"
}

// secretSteps are the Secrets of a step's pod named by a step's output.
func secretSteps(shape *plan.Pod) []pipeline.Secret {
	var out []pipeline.Secret
	for _, s := range shape.Secrets {
		if s.Ref().Step != "" {
			out = append(out, s)
		}
	}
	return out
}

// stepPod fills in the pod of a step's template. A Secret named by a
// param or a step's output is named by Argo (secretName).
func (c *compiler) stepPod(t *wfv1.Template, image string, shape *plan.Pod, args wire.Args) {
	secrets := shape.SecretEnv(secretName)
	bin, mounts := wire.Binary, []corev1.VolumeMount{{Name: wire.VolumeName, MountPath: wire.MountPath}}
	if c.opts.PodRuntime == wire.PodRuntimeImageVolume {
		bin = wire.RuntimeBinary
		mounts = append(mounts, corev1.VolumeMount{Name: wire.RuntimeVolumeName, MountPath: wire.RuntimeMountPath, ReadOnly: true})
	} else {
		t.InitContainers = []wfv1.UserContainer{{Container: wire.InitContainer(c.opts.Image)}}
	}
	t.Container = &corev1.Container{
		Image:        image,
		Command:      []string{bin, "exec"},
		Args:         args.Flags(),
		Env:          slices.Concat(c.storeEnv(), []corev1.EnvVar{wire.FieldEnv(wire.EnvPodName, "metadata.name")}, secrets), // {{pod.name}}
		Resources:    shape.Resources,
		VolumeMounts: mounts,
	}
	t.NodeSelector = shape.NodeSelector
	t.Tolerations = shape.Tolerations
	// The step's own labels and annotations, beside the workflow's
	// (pipectl's keys are refused in them).
	t.Metadata = wfv1.Metadata{Labels: shape.Labels, Annotations: shape.Annotations}
}

// volumes are the workflow's volumes: the emptyDir every pipectl pod
// mounts and, with wire.PodRuntimeImageVolume, the pipectl image as an
// image volume (pulled as the init container's image would be).
func (c *compiler) volumes() []corev1.Volume {
	vs := []corev1.Volume{{Name: wire.VolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	if c.opts.PodRuntime == wire.PodRuntimeImageVolume {
		vs = append(vs, corev1.Volume{Name: wire.RuntimeVolumeName, VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{
			Reference: c.opts.Image, PullPolicy: corev1.PullIfNotPresent,
		}}})
	}
	return vs
}

// launcherPod fills in the pod of a distributed step's template.
func (c *compiler) launcherPod(t *wfv1.Template, args wire.Args) {
	env := append(c.storeEnv(), wire.FieldEnv(wire.EnvPodName, "metadata.name"), wire.FieldEnv(wire.EnvPodNS, "metadata.namespace"), wire.FieldEnv(wire.EnvPodUID, "metadata.uid"))
	t.ServiceAccountName = c.opts.LauncherServiceAccount
	t.Container = &corev1.Container{
		Image:        c.opts.Image,
		Command:      []string{wire.Binary, "launch"},
		Args:         args.Flags(),
		Env:          env,
		VolumeMounts: []corev1.VolumeMount{{Name: wire.VolumeName, MountPath: wire.LauncherMountPath}},
	}
}

// storeEnv is the environment that selects and opens the artifact store.
func (c *compiler) storeEnv() []corev1.EnvVar {
	env := []corev1.EnvVar{{Name: wire.EnvRoot, Value: c.opts.Artifacts}}
	if c.opts.S3Secret != "" {
		for _, k := range []string{wire.EnvAccessKey, wire.EnvSecretKey} {
			env = append(env, corev1.EnvVar{Name: k, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: c.opts.S3Secret}, Key: k,
			}}})
		}
	}
	if c.opts.S3Endpoint != "" {
		env = append(env, corev1.EnvVar{Name: wire.EnvS3Endpoint, Value: c.opts.S3Endpoint})
	}
	if c.opts.S3Region != "" {
		env = append(env, corev1.EnvVar{Name: wire.EnvRegion, Value: c.opts.S3Region})
	}
	return env
}

// Images returns the image references, as written, that a workflow
// compiled from p with opts names: opts.Image and every step's image
// (sorted, each once; a step whose plan cannot be built is left to
// Compile to report). They are what Options.Images maps.
func Images(p *pipeline.Pipeline, opts Options) []string {
	seen := map[string]bool{}
	if opts.Image != "" {
		seen[opts.Image] = true
	}
	for _, s := range p.Steps {
		if sp, err := plan.Build(p, s.Name); err == nil && sp.Image != "" {
			seen[sp.Image] = true
		}
	}
	refs := make([]string, 0, len(seen))
	for r := range seen {
		refs = append(refs, r)
	}
	sort.Strings(refs)
	return refs
}

// pin is ref as images maps it, or ref.
func pin(images map[string]string, ref string) string {
	if p, ok := images[ref]; ok && p != "" {
		return p
	}
	return ref
}

func ptr[T any](v T) *T { return &v }

// target is the target of a DAG of tasks: "" (its leaf tasks), unless the
// step of one of them has trigger: completed, then every task. Argo's DAG
// fails when a target task's branch failed; a step that runs after a
// failed step and succeeds would make that branch succeed, so every task
// is a target: the run fails when any step failed, as locally.
func (c *compiler) target(tasks []wfv1.DAGTask) string {
	completed := map[string]bool{}
	for _, s := range c.p.Steps {
		if s.AfterCompleted() {
			completed[c.tasks[s.Name]] = true
		}
	}
	names := make([]string, len(tasks))
	has := false
	for i, t := range tasks {
		names[i] = t.Name
		has = has || completed[t.Name]
	}
	if !has {
		return ""
	}
	return strings.Join(names, " ")
}

// depends is the task's depends: each dependency succeeded, as locally,
// or, for a step with trigger: completed (plan.Step.AfterCompleted), ended
// whatever its outcome; except that a candidate of an input given the
// output of the first of several steps that ran (plan.Wiring.OneOf) may
// have been skipped (its when false: Skipped; its own dependencies
// skipped: Omitted) as long as one of its group succeeded; otherwise the
// task is Omitted, which the run record reads as skipped.
func (c *compiler) depends(sp *plan.Step) string {
	soft := map[string]bool{}
	var groups []string
	oneOf := maps.Clone(sp.Wiring.OneOf)
	if oneOf == nil {
		oneOf = map[string][]plan.OutputRef{}
	}
	maps.Copy(oneOf, sp.Wiring.SameOneOf) // the group ran as a whole
	for _, name := range slices.Sorted(maps.Keys(oneOf)) {
		var anyOf []string
		for _, ref := range oneOf[name] {
			soft[ref.Step] = true
			anyOf = append(anyOf, c.tasks[ref.Step]+".Succeeded")
		}
		if g := "(" + strings.Join(anyOf, " || ") + ")"; !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	var deps []string
	for _, d := range sp.Deps {
		t := c.tasks[d]
		if sp.AfterCompleted {
			// trigger: completed: once it ended, whatever its outcome
			// (its own dependencies not succeeding: Omitted).
			deps = append(deps, "("+t+".Succeeded || "+t+".Failed || "+t+".Errored || "+t+".Skipped || "+t+".Omitted)")
			continue
		}
		if soft[d] {
			deps = append(deps, "("+t+".Succeeded || "+t+".Skipped || "+t+".Omitted)")
			continue
		}
		deps = append(deps, t+".Succeeded")
	}
	return strings.Join(append(deps, groups...), " && ")
}
