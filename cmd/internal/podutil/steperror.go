package podutil

import (
	"context"
	"errors"
	"fmt"
	"os"

	"pipectl.dev/pipectl/components/process"
	"pipectl.dev/pipectl/launcher/jobset"
	"pipectl.dev/pipectl/pipeline/gang"
)

// rankFailure is a failed gang (launcher.FailedError, which the pod
// runtime does not link) with its failed rank's exit code.
type rankFailure interface {
	error
	RankExitCode() int32
}

// StepError maps how a step run by `pipectl exec` or `pipectl launch`
// ended (err; the command's context ctx; the signal that stopped it, if
// any) to the command's error and exit code: 128+signal when stopped, 124
// when ctx's deadline passed, jobset.ExitConfig for what no restart heals,
// the exit code of the failed rank or of the program. cleanup is said after
// a stop or a timeout (the launcher's "; its JobSet was deleted"). A
// cached step (reused, not run) fails only on err, with exit code 1.
func StepError(ctx context.Context, step string, cached bool, sig os.Signal, err error, cleanup string) error {
	var ce *gang.ConfigError
	var fe rankFailure
	var ee *process.ExitError
	switch {
	case cached && err != nil:
		return fmt.Errorf("step %s: %w", step, err)
	case cached:
		return nil
	case sig != nil:
		return &ExitError{Code: SignalExitCode(sig), Err: fmt.Errorf("step %s stopped by %v%s", step, sig, cleanup)}
	case errors.As(err, &ce):
		return &ExitError{Code: jobset.ExitConfig, Err: fmt.Errorf("step %s: %w (no restart can heal this)", step, err)}
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		return &ExitError{Code: 124, Err: fmt.Errorf("step %s: %v%s", step, context.Cause(ctx), cleanup)}
	case errors.As(err, &fe):
		code := int(fe.RankExitCode())
		if code <= 0 || code > 255 {
			code = ExitError1
		}
		return &ExitError{Code: code, Err: fmt.Errorf("step %s: %w", step, err)}
	case errors.As(err, &ee):
		return &ExitError{Code: ee.Code, Err: fmt.Errorf("step %s: the program failed: %w", step, err)}
	case err != nil:
		return fmt.Errorf("step %s: %w", step, err)
	}
	return nil
}
