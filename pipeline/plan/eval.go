package plan

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline"
)

// Values are the run-time values of one step's execution.
type Values struct {
	// Run is the run id.
	Run string
	// ScheduledTime is the value of {{run.scheduledTime}}: the run's
	// scheduled time in RFC 3339 (its start time when run by hand).
	ScheduledTime string
	// Params are pipeline parameter values, by name.
	Params map[string]string
	// Upstream are upstream output parameter values, by the input they feed.
	Upstream map[string]string
	// Artifacts, when set, are the URIs of input artifacts, by input name;
	// an input artifact not in it is <run>/<step>/<output> of its producer.
	// (A local run passes the producers' recorded URIs: a reused step's
	// outputs are those of an earlier run.)
	Artifacts map[string]string
	// Iteration, for a loop step, is the iteration to run (0-based).
	Iteration *int
	// same is the iteration of the other steps of its looped pipeline that
	// the step's condition reads (Wiring.sameIteration), when not Iteration.
	same *int
	// Collected are the output records of every iteration of a loop step,
	// in order, by the input they feed (Wiring.Collected).
	Collected map[string][]record.OutputRecord
	// RunFields are the values of {{run.FIELD}} for a finally step, by
	// FIELD (pipeline.RunStatus, pipeline.RunFailedSteps).
	RunFields map[string]string

	// item is the iteration's item, set by Invocation.
	item *string
}

// Eval makes the text's value.
func (t Text) Eval(v Values) (string, error) {
	var b strings.Builder
	for _, p := range t {
		switch {
		case p.Param != "":
			s, ok := v.Params[p.Param]
			if !ok {
				return "", fmt.Errorf("no value for pipeline parameter %q (want --param %s=VALUE)", p.Param, p.Param)
			}
			b.WriteString(s)
		case p.Upstream != "":
			s, ok := v.Upstream[p.Upstream]
			if !ok {
				return "", fmt.Errorf("no upstream value for input %q (want --upstream %s=VALUE)", p.Upstream, p.Upstream)
			}
			b.WriteString(s)
		case p.Item != nil:
			if v.item == nil {
				return "", fmt.Errorf("{{item}} outside a loop iteration")
			}
			s, err := pipeline.ItemValue(*v.item, p.Item.Field)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
		case p.Run == pipeline.RunID:
			if v.Run == "" {
				return "", fmt.Errorf("no value for {{run.id}} (want --run RUN)")
			}
			b.WriteString(v.Run)
		case p.Run == pipeline.RunScheduledTime:
			if v.ScheduledTime == "" {
				return "", fmt.Errorf("no value for {{run.scheduledTime}} (want --scheduled-time TIME)")
			}
			b.WriteString(v.ScheduledTime)
		case p.Product != nil:
			s, err := product(p.Product, v)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
		case p.Run != "":
			s, ok := v.RunFields[p.Run]
			if !ok {
				return "", fmt.Errorf("no value for {{run.%s}}: a finally step has it from the local run, or in a pod from --argo-status, --argo-failures and --argo-steps", p.Run)
			}
			b.WriteString(s)
		default:
			b.WriteString(p.Lit)
		}
	}
	return b.String(), nil
}

// Store names the objects of an artifact store by URI: the one thing the
// plan needs of a store (an artifacts.Store is one).
type Store interface {
	// URI is the URI of the object at key.
	URI(key string) string
}

// Invocation evaluates the wiring for component c (the step's program) with the
// run-time values v: input parameter values, input artifact URIs in store s,
// and the step's env. The local runner, `pipectl exec` and the rank pods
// all make a step's invocation with it.
func (w *Wiring) Invocation(c *components.Program, s Store, v Values) (*components.Invocation, error) {
	if w.Step == "" {
		return nil, fmt.Errorf("the step spec names no step")
	}
	if v.Run == "" {
		return nil, fmt.Errorf("no run id (want --run RUN)")
	}
	inv := &components.Invocation{Component: c, Run: v.Run, Step: w.Step, Params: map[string]string{}, Inputs: map[string]string{}, Collected: map[string][]string{}}
	if w.Items != nil {
		if err := w.iteration(inv, &v); err != nil {
			return nil, err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(w.Params)) {
		if _, ok := w.OrDefault[name]; ok {
			if _, given := v.Upstream[name]; !given {
				continue // its step did not succeed: the input's default
			}
		}
		val, err := w.Params[name].Eval(v)
		if err != nil {
			return nil, fmt.Errorf("input %q: %v", name, err)
		}
		inv.Params[name] = val
	}
	if err := w.inputURIs(inv, s, v); err != nil {
		return nil, err
	}
	if err := w.metadata(inv, v); err != nil {
		return nil, err
	}
	if err := w.collected(inv, v); err != nil {
		return nil, err
	}
	for _, e := range w.Env {
		val, err := e.Value.Eval(v)
		if err != nil {
			return nil, fmt.Errorf("env %s: %v", e.Name, err)
		}
		inv.Env = append(inv.Env, e.Name+"="+val)
	}
	if _, err := w.ResourceValues(v); err != nil {
		return nil, err
	}
	return inv, nil
}

// iteration points v at the item of iteration *v.Iteration of a loop step
// and names inv after it.
func (w *Wiring) iteration(inv *components.Invocation, v *Values) error {
	if v.Iteration == nil {
		return fmt.Errorf("step %s loops: no iteration given (want --iteration N)", w.Step)
	}
	items, err := w.ItemList(*v)
	if err != nil {
		return err
	}
	i := *v.Iteration
	if i < 0 || i >= len(items) {
		return fmt.Errorf("step %s has %d iterations, no iteration %d", w.Step, len(items), i)
	}
	v.item = &items[i]
	inv.Step = pipeline.IterationName(w.Step, i)
	return nil
}

// inputURIs gives inv the URI of each input artifact: from a producer, the
// first of several that ran, an optional one, the same iteration or a
// pipeline parameter.
func (w *Wiring) inputURIs(inv *components.Invocation, s Store, v Values) error {
	c := inv.Component
	for _, name := range slices.Sorted(maps.Keys(w.Inputs)) {
		ref := w.Inputs[name]
		if uri, ok := v.Artifacts[name]; ok {
			inv.Inputs[name] = uri
			continue
		}
		if ref.Step == "" || ref.Output == "" {
			return fmt.Errorf("input %q: the step spec names no producing step and output", name)
		}
		inv.Inputs[name] = s.URI(record.OutputKey(v.Run, ref.Step, ref.Output))
	}
	for _, name := range slices.Sorted(maps.Keys(w.OneOf)) {
		if in, _ := c.Input(name); !components.IsArtifact(in.Type) {
			continue // a value: in Params, from Values.Upstream
		}
		uri, ok := v.Artifacts[name]
		if !ok {
			return fmt.Errorf("input %q: no output of steps %s (the first of them that ran gives it)", name, refSteps(w.OneOf[name]))
		}
		inv.Inputs[name] = uri
	}
	for _, name := range slices.Sorted(maps.Keys(w.OrDefault)) {
		if _, ok := w.Params[name]; ok {
			continue // a value: in Params, from Values.Upstream
		}
		if uri, ok := v.Artifacts[name]; ok {
			inv.Inputs[name] = uri
		} // else its step did not succeed: the input is not given
	}
	same := slices.Concat(slices.Collect(maps.Keys(w.Same)), slices.Collect(maps.Keys(w.SameOneOf)))
	slices.Sort(same)
	for _, name := range same {
		if in, ok := c.Input(name); !ok || !components.IsArtifact(in.Type) {
			continue // a value: in Params, from Values.Upstream
		}
		uri, ok := v.Artifacts[name]
		if !ok {
			refs, ok := w.SameOneOf[name]
			if !ok {
				refs = []OutputRef{w.Same[name]}
			}
			return fmt.Errorf("input %q: no output of the iteration of step %s (want its outputs record)", name, refSteps(refs))
		}
		inv.Inputs[name] = uri
	}
	for _, name := range slices.Sorted(maps.Keys(w.ParamInputs)) {
		if uri, ok := v.Artifacts[name]; ok {
			inv.Inputs[name] = uri
			continue
		}
		uri, ok := v.Params[w.ParamInputs[name]]
		if !ok || uri == "" {
			return fmt.Errorf("input %q: no value for pipeline parameter %q, the URI of an artifact in the store (want --param %s=URI)", name, w.ParamInputs[name], w.ParamInputs[name])
		}
		inv.Inputs[name] = uri
	}
	return nil
}

// metadata gives inv the metadata of the inputs whose artifacts a pipeline
// parameter names, with the upstream values it holds.
func (w *Wiring) metadata(inv *components.Invocation, v Values) error {
	for _, name := range slices.Sorted(maps.Keys(w.Metadata)) {
		outputs := map[OutputRef]string{}
		for k, ref := range metadataOutputs(w.Metadata[name]) {
			key := metadataKey(name, k+1)
			val, ok := v.Upstream[key]
			if !ok {
				return fmt.Errorf("input %q: no upstream value of output %q of step %s, in its metadata (want --upstream %s=VALUE)", name, ref.Output, ref.Step, key)
			}
			outputs[ref] = val
		}
		meta, err := resolveMetadata(w.Metadata[name], v.Params, outputs)
		if err != nil {
			return fmt.Errorf("input %q: %v", name, err)
		}
		if inv.Metadata == nil {
			inv.Metadata = map[string]json.RawMessage{}
		}
		inv.Metadata[name] = meta
	}
	return nil
}

// collected gives inv the outputs its inputs collect from the iterations of
// loop steps: artifacts' URIs, or values joined as a JSON list.
func (w *Wiring) collected(inv *components.Invocation, v Values) error {
	c := inv.Component
	for _, name := range slices.Sorted(maps.Keys(w.Collected)) {
		recs, ok := v.Collected[name]
		if !ok {
			return fmt.Errorf("input %q: no outputs collected from loop step %s", name, w.Collected[name].Step)
		}
		// Artifacts (none, for an artifact input of a loop without
		// iterations: an empty directory) or values.
		in, _ := c.Input(name)
		if len(recs) > 0 && recs[0].URI != "" || len(recs) == 0 && components.IsArtifact(in.Type) {
			uris := make([]string, len(recs))
			for i, r := range recs {
				uris[i] = r.URI
			}
			inv.Collected[name] = uris
			continue
		}
		val, err := CollectValues(recs)
		if err != nil {
			return fmt.Errorf("input %q: %v", name, err)
		}
		inv.Params[name] = val
	}
	return nil
}

// ResourceValues are the values of the resources given at run time, by
// field, each checked (pipeline.CheckRuntimeResource): a value Kubernetes
// would not take fails the step, on both backends, before its program
// starts (in a pod, the pod spec patch has left it out).
func (w *Wiring) ResourceValues(v Values) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range slices.Sorted(maps.Keys(w.Resources)) {
		t := w.Resources[f]
		val, err := t.Eval(v)
		if err != nil {
			return nil, fmt.Errorf("resources.%s: %v", f, err)
		}
		if err := pipeline.CheckRuntimeResource(f, val); err != nil {
			switch {
			case len(t) == 1 && t[0].Param != "":
				err = fmt.Errorf("%v, given by parameter %s", err, t[0].Param)
			case len(t) == 1 && t[0].Upstream != "":
				if ref, ok := w.Upstream[t[0].Upstream]; ok {
					err = fmt.Errorf("%v, given by output %s of step %s", err, ref.Output, ref.Step)
				}
			}
			return nil, err
		}
		out[f] = val
	}
	return out, nil
}

// ItemList returns the items of a loop step's iterations (see
// pipeline.Items): the value of Items, a JSON list.
func (w *Wiring) ItemList(v Values) ([]string, error) {
	list, err := w.Items.Eval(v)
	if err != nil {
		return nil, fmt.Errorf("loop items: %v", err)
	}
	items, err := pipeline.Items(list)
	if err != nil {
		return nil, fmt.Errorf("loop items: %v", err)
	}
	return items, nil
}

// CollectValues is the JSON list of the values of an output parameter of
// every iteration, in order: each value as written when it is JSON text
// (a json, int, float or bool value), else as a JSON string.
func CollectValues(recs []record.OutputRecord) (string, error) {
	var b strings.Builder
	b.WriteByte('[')
	for i, r := range recs {
		if r.Value == nil {
			return "", fmt.Errorf("iteration %d has no value of output %q", i, r.Name)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		val := strings.TrimSpace(*r.Value)
		if r.Type != components.TypeString && json.Valid([]byte(val)) {
			b.WriteString(val)
			continue
		}
		q, err := json.Marshal(*r.Value)
		if err != nil {
			return "", err
		}
		b.Write(q)
	}
	b.WriteByte(']')
	return b.String(), nil
}

// Eval evaluates the condition with the run's parameter values; output
// gives the value of an upstream output parameter. Both sides are compared
// as values of c.Type (components.Equal).
func (c *Condition) Eval(v Values, output func(OutputRef) (string, error)) (bool, error) {
	side := func(o Operand) (string, error) {
		switch {
		case o.Param != "":
			s, ok := v.Params[o.Param]
			if !ok {
				return "", fmt.Errorf("parameter %q has no value", o.Param)
			}
			return s, nil
		case o.Output != nil && o.Same:
			i := v.Iteration
			if v.same != nil {
				i = v.same
			}
			if i == nil {
				return "", fmt.Errorf("output %q of step %s of the same iteration: no iteration", o.Output.Output, o.Output.Step)
			}
			return output(o.Output.Iteration(*i))
		case o.Output != nil:
			return output(*o.Output)
		case o.Item != nil:
			if v.item == nil {
				return "", fmt.Errorf("{{item}} outside a loop iteration")
			}
			return pipeline.ItemValue(*v.item, o.Item.Field)
		default:
			return o.Lit, nil
		}
	}
	l, err := side(c.Left)
	if err != nil {
		return false, err
	}
	r, err := side(c.Right)
	if err != nil {
		return false, err
	}
	var holds bool
	switch c.Op {
	case OpEqual:
		holds = components.Equal(c.Type, l, r)
	case OpNotEqual:
		holds = !components.Equal(c.Type, l, r)
	default:
		order, err := compare(c.Type, l, r)
		if err != nil {
			return false, fmt.Errorf("%s %s %s: %v", strings.TrimSpace(l), c.Op, strings.TrimSpace(r), err)
		}
		holds = c.Op == OpLess && order < 0 || c.Op == OpLessEqual && order <= 0 ||
			c.Op == OpGreater && order > 0 || c.Op == OpGreaterEqual && order >= 0
	}
	if !holds {
		return false, nil
	}
	for i := range c.And {
		ok, err := c.And[i].Eval(v, output)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// compare orders a and b as values of type t, int (64-bit, as KFP's int()
// and the Argo controller's int() read it) or float (float64).
func compare(t, a, b string) (int, error) {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	switch t {
	case components.TypeInt:
		x, err := strconv.ParseInt(strings.TrimPrefix(a, "+"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("expected a 64-bit int, got %q", a)
		}
		y, err := strconv.ParseInt(strings.TrimPrefix(b, "+"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("expected a 64-bit int, got %q", b)
		}
		return cmp.Compare(x, y), nil
	case components.TypeFloat:
		x, err := strconv.ParseFloat(a, 64)
		if err != nil {
			return 0, fmt.Errorf("expected a float, got %q", a)
		}
		y, err := strconv.ParseFloat(b, 64)
		if err != nil {
			return 0, fmt.Errorf("expected a float, got %q", b)
		}
		return cmp.Compare(x, y), nil
	}
	return 0, fmt.Errorf("%s values have no order (expected int or float)", t)
}

// refSteps are the steps of refs, joined by commas.
func refSteps(refs []OutputRef) string {
	names := make([]string, len(refs))
	for i, r := range refs {
		names[i] = r.Step
	}
	return strings.Join(names, ", ")
}

// ResolveOneOf sets, for each input of w given the output of the first of
// several steps that succeeded (Wiring.OneOf), its value in v.Upstream or
// its URI in v.Artifacts and sha256 in sums. output returns the record of
// a step's output, ok false when the step did not succeed (skipped). No
// candidate with its output is an error.
func (w *Wiring) ResolveOneOf(v *Values, sums map[string]string, output func(OutputRef) (rec record.OutputRecord, ok bool, err error)) error {
	for _, name := range slices.Sorted(maps.Keys(w.OneOf)) {
		if err := v.givenFirst(name, w.OneOf[name], sums, output); err != nil {
			return err
		}
	}
	return nil
}

// givenFirst sets input name to the output of the first of refs that
// ran (given); none is an error.
func (v *Values) givenFirst(name string, refs []OutputRef, sums map[string]string, output func(OutputRef) (rec record.OutputRecord, ok bool, err error)) error {
	ref, rec, found, err := firstRan(refs, output)
	switch {
	case err != nil:
		return fmt.Errorf("input %q: %w", name, err)
	case !found:
		return fmt.Errorf("input %q: none of steps %s has output it (the first of them that ran gives it)", name, refSteps(refs))
	}
	return v.given(name, ref, rec, sums)
}

// firstRan returns the first of refs whose step ran, and its record.
func firstRan(refs []OutputRef, output func(OutputRef) (rec record.OutputRecord, ok bool, err error)) (OutputRef, record.OutputRecord, bool, error) {
	for _, ref := range refs {
		rec, ok, err := output(ref)
		if err != nil {
			return ref, rec, false, fmt.Errorf("step %s: %w", ref.Step, err)
		}
		if ok {
			return ref, rec, true, nil
		}
	}
	return OutputRef{}, record.OutputRecord{}, false, nil
}

// iterations is refs, each of iteration i (OutputRef.Iteration).
func iterations(refs []OutputRef, i int) []OutputRef {
	out := make([]OutputRef, len(refs))
	for k, r := range refs {
		out[k] = r.Iteration(i)
	}
	return out
}

// ResolveOrDefault sets, for each input of w given the output of a step
// that may not have succeeded (Wiring.OrDefault), its value in v.Upstream
// or its URI in v.Artifacts and sha256 in sums when that step succeeded;
// otherwise the input is left out, and takes its default. output returns
// the record of a step's output, ok false when the step did not succeed.
// v's maps are replaced by copies.
func (w *Wiring) ResolveOrDefault(v *Values, sums map[string]string, output func(OutputRef) (rec record.OutputRecord, ok bool, err error)) error {
	if len(w.OrDefault) == 0 {
		return nil
	}
	v.Upstream, v.Artifacts = maps.Clone(v.Upstream), maps.Clone(v.Artifacts)
	if v.Upstream == nil {
		v.Upstream = map[string]string{}
	}
	if v.Artifacts == nil {
		v.Artifacts = map[string]string{}
	}
	for _, name := range slices.Sorted(maps.Keys(w.OrDefault)) {
		ref := w.OrDefault[name]
		rec, ok, err := output(ref)
		if err != nil {
			return fmt.Errorf("input %q: step %s: %w", name, ref.Step, err)
		}
		if !ok {
			continue
		}
		if err := v.given(name, ref, rec, sums); err != nil {
			return err
		}
	}
	return nil
}

// ResolveSame fills in v, for iteration *v.Iteration of a loop step, the
// inputs given the same iteration's output of another step of its looped
// pipeline (Wiring.Same): output looks up an output of an iteration
// (STEP[i]) that ran, ok false when it did not. v's maps are replaced by
// copies; sums gets the input artifacts' sha256.
func (w *Wiring) ResolveSame(v *Values, sums map[string]string, output func(OutputRef) (rec record.OutputRecord, ok bool, err error)) error {
	if len(w.Same) == 0 && len(w.SameOneOf) == 0 {
		return nil
	}
	if v.Iteration == nil {
		return fmt.Errorf("step %s reads the same iteration of other steps: no iteration given (want --iteration N)", w.Step)
	}
	v.Upstream, v.Artifacts = maps.Clone(v.Upstream), maps.Clone(v.Artifacts)
	if v.Upstream == nil {
		v.Upstream = map[string]string{}
	}
	if v.Artifacts == nil {
		v.Artifacts = map[string]string{}
	}
	same, err := w.sameIteration(*v)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(w.Same)) {
		ref := w.Same[name].Iteration(same)
		rec, ok, err := output(ref)
		if err != nil {
			return fmt.Errorf("input %q: step %s: %w", name, ref.Step, err)
		}
		if !ok {
			return fmt.Errorf("input %q: step %s did not run: its output %q is not there", name, ref.Step, ref.Output)
		}
		if err := v.given(name, ref, rec, sums); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(w.SameOneOf)) {
		if err := v.givenFirst(name, iterations(w.SameOneOf[name], same), sums, output); err != nil {
			return err
		}
	}
	return nil
}

// given sets input name to the output rec (ref) of another step: an
// artifact's URI (and its sha256 in sums), or a parameter's value.
func (v *Values) given(name string, ref OutputRef, rec record.OutputRecord, sums map[string]string) error {
	switch {
	case rec.URI != "":
		v.Artifacts[name], sums[name] = rec.URI, rec.SHA256
	case rec.Value != nil:
		v.Upstream[name] = *rec.Value
	default:
		return fmt.Errorf("input %q: output %q of step %s has neither a value nor a URI", name, ref.Output, ref.Step)
	}
	return nil
}

// PerIteration reports whether the condition compares a loop step's item
// or another step's output of the same iteration: it holds or not for each
// iteration (Wiring.When).
func (c *Condition) PerIteration() bool {
	for _, cmp := range append([]Condition{*c}, c.And...) {
		for _, o := range []Operand{cmp.Left, cmp.Right} {
			if o.Item != nil || o.Same {
				return true
			}
		}
	}
	return false
}

// SkipReason says why iteration *v.Iteration of a loop step does not run,
// "" when it runs: its condition (Wiring.When) is false, or another step
// of its looped pipeline whose output it reads did not run that iteration
// (was skipped). output looks up an output of a step or iteration that ran
// (ok false when it did not).
func (w *Wiring) SkipReason(v Values, output func(OutputRef) (rec record.OutputRecord, ok bool, err error)) (string, error) {
	if v.Iteration == nil || w.When == nil && len(w.Same) == 0 && len(w.SameOneOf) == 0 {
		return "", nil
	}
	same, err := w.sameIteration(v)
	if err != nil {
		return "", err
	}
	v.same = &same
	for _, name := range slices.Sorted(maps.Keys(w.Same)) {
		ref := w.Same[name].Iteration(same)
		if _, ok, err := output(ref); err != nil {
			return "", fmt.Errorf("input %q: step %s: %w", name, ref.Step, err)
		} else if !ok {
			return fmt.Sprintf("upstream step %s did not run", ref.Step), nil
		}
	}
	for _, name := range slices.Sorted(maps.Keys(w.SameOneOf)) {
		refs := iterations(w.SameOneOf[name], same)
		if _, _, found, err := firstRan(refs, output); err != nil {
			return "", fmt.Errorf("input %q: %w", name, err)
		} else if !found {
			return fmt.Sprintf("none of upstream steps %s ran (the first of them that ran gives an input)", refSteps(refs)), nil
		}
	}
	if w.When == nil {
		return "", nil
	}
	items, err := w.ItemList(v)
	if err != nil {
		return "", err
	}
	if i := *v.Iteration; i >= 0 && i < len(items) {
		v.item = &items[i]
	}
	holds, err := w.When.Eval(v, func(ref OutputRef) (string, error) {
		rec, ok, err := output(ref)
		switch {
		case err != nil:
			return "", err
		case !ok:
			return "", fmt.Errorf("step %s did not run: its output %q is not there", ref.Step, ref.Output)
		case rec.Value == nil:
			return "", fmt.Errorf("output %q of step %s is no parameter", ref.Output, ref.Step)
		}
		return *rec.Value, nil
	})
	if err != nil {
		return "", fmt.Errorf("when: %w", err)
	}
	if !holds {
		return fmt.Sprintf("condition %q is false", w.When.Source), nil
	}
	return "", nil
}

// sameIteration is the iteration of the other steps of its looped pipeline
// that iteration *v.Iteration of a loop step reads (Same, When): the same,
// or for a loop step of the pipeline that loops of its own (SameList), the
// index of list SameList's item in the combination of its product, the
// first list outermost.
func (w *Wiring) sameIteration(v Values) (int, error) {
	if v.Iteration == nil {
		return 0, fmt.Errorf("step %s reads the same iteration of other steps: no iteration given (want --iteration N)", w.Step)
	}
	k := *v.Iteration
	if w.SameList == "" {
		return k, nil
	}
	if len(w.Items) != 1 || len(w.Items[0].Product) == 0 || w.Items[0].Product[0].Name != w.SameList {
		return 0, fmt.Errorf("step %s: the iteration of list %s: the step loops over no product whose first list it is", w.Step, w.SameList)
	}
	sizes, err := outerSizes(w.Items[0].Product, v)
	if err != nil {
		return 0, fmt.Errorf("loop product %v", err)
	}
	for i, n := range sizes {
		if k < n {
			return i, nil
		}
		k -= n
	}
	return 0, fmt.Errorf("step %s has no iteration %d", w.Step, *v.Iteration)
}

// CollectedIterations says which iterations of its loop step input name
// of Collected collects for the step's iteration *v.Iteration: all of
// them (all true), or for an input of CollectedOuter those whose outer
// item is item *v.Iteration, in order.
func (w *Wiring) CollectedIterations(name string, v Values) (iterations []int, all bool, err error) {
	lists, ok := w.CollectedOuter[name]
	if !ok {
		return nil, true, nil
	}
	if v.Iteration == nil {
		return nil, false, fmt.Errorf("input %q collects one iteration's outputs: no iteration given (want --iteration N)", name)
	}
	sizes, err := outerSizes(lists, v)
	if err != nil {
		return nil, false, fmt.Errorf("input %q: loop product %v", name, err)
	}
	iterations = []int{}
	if i := *v.Iteration; i >= 0 && i < len(sizes) {
		first := 0
		for _, n := range sizes[:i] {
			first += n
		}
		for k := first; k < first+sizes[i]; k++ {
			iterations = append(iterations, k)
		}
	}
	return iterations, false, nil
}

// outerSizes is, for each item of a product's first list, the number of
// its combinations (those of the lists after it, which may be fields of
// that item): combination k's first item is the one whose sizes, summed in
// order, pass k.
func outerSizes(lists []ProductList, v Values) ([]int, error) {
	pl, given, err := productInput(lists, v)
	if err != nil {
		return nil, err
	}
	sizes := make([]int, len(given[0]))
	if !slices.ContainsFunc(pl[1:], func(l pipeline.ProductList) bool { return l.Item }) {
		// Lists of their own: as many combinations for each item.
		n := 1
		for _, g := range given[1:] {
			n *= len(g)
		}
		for i := range sizes {
			sizes[i] = n
		}
		return sizes, nil
	}
	for i, it := range given[0] {
		g := slices.Clone(given)
		g[0] = []string{it}
		items, err := pipeline.ProductItems(pl, g)
		if err != nil {
			return nil, err
		}
		sizes[i] = len(items)
	}
	return sizes, nil
}

// product is the JSON list of a loop's product: every combination of the
// items of its lists, evaluated with v (a list of an earlier list's item
// with that item).
func product(lists []ProductList, v Values) (string, error) {
	pl, given, err := productInput(lists, v)
	if err != nil {
		return "", err
	}
	items, err := pipeline.ProductItems(pl, given)
	if err != nil {
		return "", err
	}
	return "[" + strings.Join(items, ",") + "]", nil
}

// productInput is what pipeline.ProductItems takes of a loop's product
// evaluated with v: each list's name and, but for a list of an earlier
// list's item, its items.
func productInput(lists []ProductList, v Values) ([]pipeline.ProductList, [][]string, error) {
	pl := make([]pipeline.ProductList, len(lists))
	given := make([][]string, len(lists))
	for i, l := range lists {
		pl[i].Name = l.Name
		if len(l.List) == 1 && l.List[0].Item != nil {
			pl[i].Item, pl[i].Field = true, l.List[0].Item.Field
			continue
		}
		text, err := l.List.Eval(v)
		if err != nil {
			return nil, nil, fmt.Errorf("list %s: %v", l.Name, err)
		}
		if given[i], err = pipeline.Items(text); err != nil {
			return nil, nil, fmt.Errorf("list %s: %v", l.Name, err)
		}
	}
	return pl, given, nil
}

// Iteration is the same output of iteration i of the step (STEP[i]).
func (r OutputRef) Iteration(i int) OutputRef {
	return OutputRef{Step: pipeline.IterationName(r.Step, i), Output: r.Output}
}

// ReadsRun reports whether the step's values read {{run.FIELD}} (its
// inputs, env or resources).
func (w *Wiring) ReadsRun(field string) bool {
	reads := func(t Text) bool {
		return slices.ContainsFunc(t, func(p Part) bool { return p.Run == field })
	}
	for _, t := range w.Params {
		if reads(t) {
			return true
		}
	}
	for _, e := range w.Env {
		if reads(e.Value) {
			return true
		}
	}
	for _, t := range w.Resources {
		if reads(t) {
			return true
		}
	}
	return false
}
