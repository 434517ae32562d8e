// Package mpirsh is `pipectl mpi-rsh`, OpenMPI's rsh agent in the node pods
// of a distributed step of framework mpi (OMPI_MCA_plm_rsh_agent): it runs
// a daemon's command on another node pod's agent, as ssh would.
package mpirsh

import (
	"context"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline/gang/mpiagent"
)

// NewCmdMPIRsh returns the mpi-rsh command.
func NewCmdMPIRsh(f podutil.Env) *cobra.Command {
	return &cobra.Command{
		Use:    wire.RshCommand + " [SSH OPTIONS] HOST COMMAND...",
		Short:  "OpenMPI's rsh agent in the node pods of an mpi step (run by mpirun, not by hand)",
		Hidden: true,
		// ssh's options (OMPI_MCA_plm_rsh_args) are the agent's to skip.
		DisableFlagParsing: true,
		Args:               cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ios := f.Streams()
			var stop podutil.Stopper
			ctx, release := stop.StopOnSignal(context.Background(), nil, nil)
			defer release()
			r := &mpiagent.Rsh{Getenv: f.Env, Stdout: ios.Out, Stderr: ios.ErrOut}
			code, err := r.Run(ctx, args)
			if err != nil {
				return &podutil.ExitError{Code: 255, Err: err}
			}
			if code != 0 {
				return &podutil.ExitError{Code: code, Silent: true}
			}
			return nil
		},
	}
}
