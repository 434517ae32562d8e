package local

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/plan"
)

// runLoop runs the iterations of a loop step, each as the step STEP[i] with
// its own record, at most the loop's parallelism (and the run's) at once,
// and records the loop step's outcome: Succeeded when every iteration
// succeeded (or there is none), else Failed (or Cancelled). A failed
// iteration does not stop the others.
func (e *execution) runLoop(ctx context.Context, sp *plan.Step, v plan.Values, sums map[string]string) {
	items, err := sp.Wiring.ItemList(v)
	if err != nil {
		e.fail(ctx, sp.Name, 1, "%v", err)
		return
	}
	names := e.addIterations(ctx, sp.Name, items)
	limit := e.r.parallelism()
	if p := sp.Loop.Parallelism; p > 0 && p < limit {
		limit = p
	}
	e.update(ctx, sp.Name, func(r *record.StepRecord) { r.Message = fmt.Sprintf("%d iterations", len(items)) })
	e.r.statusf("%-12s %d iterations, at most %d at once\n", pipeline.IterationRange(sp.Name, len(items)), len(items), limit)

	slots := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i, name := range names {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			e.finish(ctx, name, record.StatusCancelled, nil, "run cancelled before the iteration started")
			continue
		}
		iv := v
		iv.Iteration = &i
		wg.Go(func() {
			defer func() { <-slots }()
			e.execute(ctx, sp, name, iv, sums)
		})
	}
	wg.Wait()

	counts := map[string]int{}
	e.mu.Lock()
	for _, pos := range e.iterations[sp.Name] {
		counts[e.run.Steps[pos].Status]++
	}
	e.mu.Unlock()
	msg := record.CountStatuses(counts)
	if msg == "" {
		msg = "no iterations"
	}
	status := record.StatusSucceeded
	switch {
	case counts[record.StatusFailed] > 0:
		status = record.StatusFailed
	case counts[record.StatusCancelled] > 0 || ctx.Err() != nil:
		status = record.StatusCancelled
	}
	// The loop step ran no program of its own: no exit code (its
	// iterations have theirs), as on Argo.
	e.finish(ctx, sp.Name, status, nil, msg)
	e.r.statusf("%-12s %s\n", pipeline.IterationRange(sp.Name, len(items)), msg)
}

// addIterations adds the records of a loop step's iterations, pending,
// with their items, and writes the run record holding them. It returns
// their names.
func (e *execution) addIterations(ctx context.Context, step string, items []string) []string {
	names := make([]string, len(items))
	e.mu.Lock()
	deps := e.step(step).DependsOn
	for i, item := range items {
		names[i] = pipeline.IterationName(step, i)
		pos := len(e.run.Steps)
		e.run.Steps = append(e.run.Steps, record.StepRecord{
			Name: names[i], Status: record.StatusPending, DependsOn: deps,
			Outputs: []record.OutputRecord{}, Item: json.RawMessage(item),
		})
		e.index[names[i]] = pos
		e.iterations[step] = append(e.iterations[step], pos)
		e.jr.grow()
	}
	e.mu.Unlock()
	if err := e.save(context.WithoutCancel(ctx)); err != nil {
		e.r.statusf("warning: cannot write the run record: %v\n", err)
	}
	return names
}

// ordered returns the step records in the pipeline's order, each loop
// step followed by its iterations; e.mu must be held.
func (e *execution) ordered() []record.StepRecord {
	if len(e.iterations) == 0 {
		return e.run.Steps
	}
	out := make([]record.StepRecord, 0, len(e.run.Steps))
	for _, s := range e.p.Steps {
		out = append(out, *e.step(s.Name))
		for _, pos := range e.iterations[s.Name] {
			out = append(out, e.run.Steps[pos])
		}
	}
	return out
}
