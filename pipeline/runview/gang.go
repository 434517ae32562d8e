package runview

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"pipectl.dev/pipectl/components/record"
)

// maxRanksShown bounds the ranks WriteGang lists for one attempt.
const maxRanksShown = 16

// ProgressSummary is a step's reported progress in one line: "step 120,
// epoch=2 loss=0.41 (57 lines, 2 malformed)"; "" when it reported none.
func ProgressSummary(p *record.Progress) string {
	if p == nil || p.Lines == 0 {
		return ""
	}
	var parts []string
	if p.Step != nil {
		parts = append(parts, fmt.Sprintf("step %d", *p.Step))
	}
	var vals []string
	for _, k := range slices.Sorted(maps.Keys(p.Last)) {
		vals = append(vals, k+"="+strconv.FormatFloat(p.Last[k], 'g', 6, 64))
	}
	if len(vals) > 0 {
		parts = append(parts, strings.Join(vals, " "))
	}
	count := fmt.Sprintf("(%d metric lines", p.Lines)
	if p.Malformed > 0 {
		count += fmt.Sprintf(", %d malformed", p.Malformed)
	}
	return strings.TrimPrefix(strings.Join(parts, ", ")+" "+count+")", " ")
}

// WriteGang writes what the ranks of the distributed step s reported and
// each of its gang attempts that did not succeed, stalled ones rank by
// rank; nothing for a step with neither.
func WriteGang(w io.Writer, s *record.StepRecord) {
	if sum := ProgressSummary(s.Progress); sum != "" {
		fmt.Fprintf(w, "%s: progress: %s\n", s.Name, sum)
		for _, line := range Sparklines(s.Progress) {
			fmt.Fprintf(w, "    %s\n", line)
		}
	}
	for _, a := range s.GangAttempts {
		then := "the step failed"
		if a.Restarted {
			then = "restarted"
		}
		fmt.Fprintf(w, "%s: gang attempt %d %s (%s): %s\n", s.Name, a.Attempt, a.Reason, then, firstClause(a))
		for i, r := range a.Ranks {
			if i == maxRanksShown {
				fmt.Fprintf(w, "    and %d more rank(s) (-o json lists them)\n", len(a.Ranks)-i)
				break
			}
			fmt.Fprintf(w, "    %s\n", r)
		}
	}
}

// firstClause is a stalled attempt's message without its ranks (listed
// one a line), or a failed attempt's whole message.
func firstClause(a record.GangAttempt) string {
	if a.Reason == record.ReasonStalled {
		msg, _, _ := strings.Cut(a.Message, "; ")
		return strings.TrimPrefix(msg, "stalled: ")
	}
	return a.Message
}
