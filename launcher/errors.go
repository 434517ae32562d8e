package launcher

import (
	"fmt"
	"strings"
	"time"
)

// FailedError reports a JobSet that failed: which rank failed first, how,
// and its last log lines.
type FailedError struct {
	JobSet string
	// Reason and Message are those of the JobSet's Failed condition.
	Reason, Message string
	// Restarts is the number of gang restarts made.
	Restarts int32
	// Rank is the node rank of the first pod that failed (-1 if unknown),
	// Pod its name, ExitCode its rank container's exit code (0 if it has
	// none) and Why what happened ("exit code 3 (Error)", "Evicted: ...").
	Rank     int
	Pod      string
	ExitCode int32
	Why      string
	// Last are the last lines of that rank's log.
	Last []string
	// Result holds the timings.
	Result Result
}

func (e *FailedError) Error() string {
	var b strings.Builder
	if e.Rank >= 0 {
		fmt.Fprintf(&b, "rank %d failed: %s", e.Rank, e.Why)
	} else {
		fmt.Fprintf(&b, "the JobSet failed")
	}
	if e.Restarts > 0 {
		fmt.Fprintf(&b, " (after %d gang restart(s))", e.Restarts)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, "; JobSet %s: %s", e.JobSet, e.Message)
	}
	return b.String()
}

// PendingRank is a rank that was not running when the startup deadline passed.
type PendingRank struct {
	Rank int
	// Pod is the rank's pod ("" when it had none).
	Pod string
	// Reason says why it is pending: the scheduler's message, a waiting
	// container's reason.
	Reason string
}

// StartupError reports a gang that did not start in time.
type StartupError struct {
	Timeout  time.Duration
	Running  int
	Nodes    int
	Attempt  int32
	Pending  []PendingRank
	Deleted  bool
	Deletion error
}

func (e *StartupError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "not every rank was running after %s (%d of %d running)", e.Timeout, e.Running, e.Nodes)
	if e.Deleted {
		b.WriteString("; the JobSet was deleted")
	} else if e.Deletion != nil {
		fmt.Fprintf(&b, "; deleting the JobSet failed: %v", e.Deletion)
	}
	for _, p := range e.Pending {
		if p.Pod != "" {
			fmt.Fprintf(&b, "\n  rank %d (pod %s): %s", p.Rank, p.Pod, p.Reason)
		} else {
			fmt.Fprintf(&b, "\n  rank %d: %s", p.Rank, p.Reason)
		}
	}
	return b.String()
}
