package argorun

import "testing"

func TestExecutorLine(t *testing.T) {
	for line, want := range map[string]bool{
		`time="2026-11-30T12:12:05.753Z" level=info msg="sub-process exited" argo=true error="<nil>"`:                                             true,
		`time="2026-11-30T12:12:09.259Z" level=info msg="no need to save parameter - on overlapping volume: /pipectl/outputs/accuracy" argo=true`: true,
		`epoch 1/3 loss 0.3808 argo=true`: false,
		`time="x" level=info msg="mine"`:  false,
		`[rank 0] done in 0.75s`:          false,
		``:                                false,
	} {
		if got := ExecutorLine(line); got != want {
			t.Errorf("ExecutorLine(%q) = %v, want %v", line, got, want)
		}
	}
}
