// Package podroot is the top command of pipectl-pod, pipectl's pod
// runtime: `exec`, what every step and rank pod of a compiled workflow runs
// (from the same command package as pipectl's), without the rest. The
// launcher pod of a distributed step runs pipectl itself from the image
// (nothing is copied there), so `launch` and the Kubernetes client it
// needs stay out of the binary every pod copies.
package podroot

import (
	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/buildinfo"
	execcmd "pipectl.dev/pipectl/cmd/internal/cmd/exec"
	"pipectl.dev/pipectl/cmd/internal/cmd/mpirsh"
	"pipectl.dev/pipectl/cmd/internal/podutil"
)

// Program is the pod runtime's name.
const Program = "pipectl-pod"

// NewCmdPodRoot returns the pipectl-pod command with exec.
func NewCmdPodRoot(f *podutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   Program,
		Short: "pipectl's pod runtime: what the step and rank pods of a compiled workflow run",
		Long: `pipectl-pod is the part of pipectl that runs inside step and rank pods:
'exec', with the same flags as 'pipectl exec'. It links no compiler, no Argo
or Kubernetes client and no UI, so a pod's init container copies a small binary.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       podutil.FullVersion(f.Version),
	}
	cmd.SetOut(f.IOStreams.Out)
	cmd.SetErr(f.IOStreams.ErrOut)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &podutil.FlagError{Err: err}
	})
	podutil.AddStoreFlags(cmd.PersistentFlags(), &f.ArtifactsRoot, &f.StoreOptions)
	cmd.AddCommand(execcmd.NewCmdExec(f, nil), mpirsh.NewCmdMPIRsh(f))
	cmd.CompletionOptions.DisableDefaultCmd = true
	return cmd
}

// Main runs pipectl-pod with args and returns the process's exit code.
func Main(args []string) int {
	f := &podutil.Factory{IOStreams: podutil.System(), Version: buildinfo.Version}
	return podutil.Execute(NewCmdPodRoot(f), args, f.IOStreams.ErrOut, Program)
}
