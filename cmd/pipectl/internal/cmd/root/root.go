// Package root is pipectl's top command: global flags, subcommands, and the
// one place where errors become exit codes.
package root

import (
	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/buildinfo"
	execcmd "pipectl.dev/pipectl/cmd/internal/cmd/exec"
	"pipectl.dev/pipectl/cmd/internal/cmd/mpirsh"
	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/artifacts"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/compile"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/explain"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/gc"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/launch"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/logs"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/pack"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/run"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/runs"
	schedulecmd "pipectl.dev/pipectl/cmd/pipectl/internal/cmd/schedule"
	uicmd "pipectl.dev/pipectl/cmd/pipectl/internal/cmd/ui"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/validate"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmd/version"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
)

// The help groups of pipectl's commands: the user's, and those the pods of
// a compiled workflow run.
const (
	groupUser = "user"
	groupPod  = "pod"
)

// NewCmdRoot returns the pipectl command with every subcommand.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pipectl",
		Short: "Run ML pipelines kept as YAML: on this machine, or on Kubernetes through Argo",
		Long: `pipectl runs machine-learning pipelines (preprocess → distributed train → evaluate,
or any DAG of steps) kept as YAML in git. It runs them on this machine with no cluster,
with artifacts in a local store or S3/MinIO, and lets you browse runs and artifacts.
S3 credentials come from the usual AWS_* variables (AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY), ~/.aws/credentials or IAM; never from flags.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       f.FullVersion(),
	}
	cmd.SetVersionTemplate(version.Line(f.FullVersion()) + "\n")
	cmd.SetOut(f.IOStreams.Out)
	cmd.SetErr(f.IOStreams.ErrOut)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &podutil.FlagError{Err: err}
	})
	podutil.AddStoreFlags(cmd.PersistentFlags(), &f.ArtifactsRoot, &f.StoreOptions)
	cmd.PersistentFlags().StringArrayVar(&f.Runtimes, "runtimes", nil, "Kubeflow Trainer runtimes (ClusterTrainingRuntime, TrainingRuntime) that steps and TrainJobs may name: a file or a folder of them (repeatable; see pipectl help kubeflow-trainer)")
	cmd.AddGroup(&cobra.Group{ID: groupUser, Title: "Commands:"}, &cobra.Group{ID: groupPod, Title: "Commands run inside pods (by a compiled workflow):"})
	for _, c := range []*cobra.Command{
		version.NewCmdVersion(f, nil),
		validate.NewCmdValidate(f, nil),
		explain.NewCmdExplain(f, nil),
		run.NewCmdRun(f, nil),
		runs.NewCmdRuns(f),
		schedulecmd.NewCmdSchedule(f),
		logs.NewCmdLogs(f, nil),
		artifacts.NewCmdArtifacts(f),
		compile.NewCmdCompile(f, nil),
		gc.NewCmdGC(f, nil),
		pack.NewCmdPack(f, nil),
		uicmd.NewCmdUI(f, nil),
	} {
		c.GroupID = groupUser
		cmd.AddCommand(c)
	}
	for _, c := range []*cobra.Command{execcmd.NewCmdExec(f, nil), launch.NewCmdLaunch(f, nil), mpirsh.NewCmdMPIRsh(f)} {
		c.GroupID = groupPod
		cmd.AddCommand(c)
	}
	cmd.SetHelpCommand(newCmdHelp(cmd))
	cmd.SetUsageTemplate(withTopics(cmd.UsageTemplate()))
	cmd.SetHelpCommandGroupID(groupUser)
	cmd.SetCompletionCommandGroupID(groupUser)
	return cmd
}

// Main runs pipectl with args and returns the process's exit code.
func Main(args []string) int {
	f := &cmdutil.Factory{IOStreams: podutil.System(), Version: buildinfo.Version}
	return podutil.Execute(NewCmdRoot(f), args, f.IOStreams.ErrOut, "pipectl")
}
