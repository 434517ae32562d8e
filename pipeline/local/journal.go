package local

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"time"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// journal writes the step records that changed as entries of the run's
// journal (see record.JournalEntry), so that a state change costs a
// small write whatever the size of the run. One goroutine writes: changes
// made while it writes go into its next entry together.
type journal struct {
	e *execution

	// Guarded by e.mu.
	dirty   []int  // positions of the steps changed since the last entry
	isDirty []bool // by position
	seq     int    // the last entry written (or being written)

	wake     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	warn     sync.Once
	beatWarn sync.Once
}

func newJournal(e *execution, steps int) *journal {
	return &journal{e: e, isDirty: make([]bool, steps), wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// mark notes that step i changed; e.mu must be held.
func (j *journal) mark(i int) {
	if !j.isDirty[i] {
		j.isDirty[i] = true
		j.dirty = append(j.dirty, i)
	}
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

// grow makes room for a step added to the run (a loop's iteration); e.mu
// must be held.
func (j *journal) grow() { j.isDirty = append(j.isDirty, false) }

// run writes entries until close, and the run's heartbeat (see
// recordstore.Beat) every Runner.HeartbeatInterval, so that readers on
// other hosts can tell when this runner died.
func (j *journal) run(ctx context.Context) {
	defer close(j.done)
	every := j.e.r.HeartbeatInterval
	if every <= 0 {
		every = record.HeartbeatInterval
	}
	beat := time.NewTicker(every)
	defer beat.Stop()
	j.beat(ctx)
	for {
		select {
		case <-beat.C:
			j.beat(ctx)
		case <-j.wake:
			j.write(ctx)
		case <-j.stop:
			j.write(ctx)
			return
		}
	}
}

// close writes the last changes and stops the writer.
func (j *journal) close() {
	close(j.stop)
	<-j.done
}

func (j *journal) beat(ctx context.Context) {
	if err := recordstore.Beat(ctx, j.e.r.Store, j.e.run.ID); err != nil {
		j.beatWarn.Do(func() { j.e.r.statusf("warning: cannot write the run's heartbeat: %v\n", err) })
	}
}

// write writes one entry with the records of the steps changed since the last.
func (j *journal) write(ctx context.Context) {
	e := j.e
	e.mu.Lock()
	if len(j.dirty) == 0 {
		e.mu.Unlock()
		return
	}
	j.seq++
	entry := record.JournalEntry{Seq: j.seq, Steps: make([]record.StepRecord, 0, len(j.dirty))}
	for _, i := range j.dirty {
		entry.Steps = append(entry.Steps, e.run.Steps[i])
		j.isDirty[i] = false
	}
	j.dirty = j.dirty[:0]
	// Encoded under the lock: the records' pointers and slices are shared.
	b, err := json.Marshal(entry)
	e.mu.Unlock()
	if err == nil {
		err = e.r.Store.Put(ctx, record.JournalKey(e.run.ID, entry.Seq), bytes.NewReader(b), int64(len(b)))
	}
	if err != nil {
		j.warn.Do(func() { e.r.statusf("warning: cannot write the run's journal: %v\n", err) })
	}
}

// remove deletes the entries once the run record holds them all, and the
// heartbeat.
func (j *journal) remove(ctx context.Context) {
	_ = j.e.r.Store.Delete(ctx, record.HeartbeatKey(j.e.run.ID))
	const workers = 8
	keys := make(chan string)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for k := range keys {
				_ = j.e.r.Store.Delete(ctx, k)
			}
		})
	}
	for seq := 1; seq <= j.seq; seq++ {
		keys <- record.JournalKey(j.e.run.ID, seq)
	}
	close(keys)
	wg.Wait()
}
