package cmdutil

import (
	"context"
	"os"

	"pipectl.dev/pipectl/cmd/pipectl/internal/podutil"
)

// StepError maps how a step run by exec or launch ended to the command's
// error and exit code (podutil.StepError).
func StepError(ctx context.Context, step string, cached bool, sig os.Signal, err error, cleanup string) error {
	return podutil.StepError(ctx, step, cached, sig, err, cleanup)
}
