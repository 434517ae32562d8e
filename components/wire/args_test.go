package wire

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/pflag"
)

// kubelet is what Kubernetes does to a container's arguments: $(VAR) of a
// variable it has is replaced (these pods have none that we write), $$
// is $.
func kubelet(args []string) []string {
	out := make([]string, len(args))
	dollar := regexp.MustCompile(`\$\$`)
	for i, a := range args {
		out[i] = dollar.ReplaceAllLiteralString(a, "$")
	}
	return out
}

// parse is what a command does with a container's arguments: cobra's
// flags, then -- and the program's argv.
func parse(t testing.TB, cmd Command, args []string) (Args, error) {
	t.Helper()
	var a Args
	fl := pflag.NewFlagSet("pipectl", pflag.ContinueOnError)
	a.AddFlags(fl, cmd)
	if err := fl.Parse(args); err != nil {
		return a, err
	}
	if n := fl.ArgsLenAtDash(); n >= 0 {
		a.Argv = fl.Args()[n:]
	}
	return a, nil
}

func roundTrip(t testing.TB, cmd Command, a Args) {
	t.Helper()
	got, err := parse(t, cmd, kubelet(a.Flags()))
	if err != nil {
		t.Fatalf("parse %q: %v", a.Flags(), err)
	}
	if a.Cache == "" {
		a.Cache = "off" // the flag's default
	}
	if diff := cmp.Diff(a, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Args → Flags → parse (-want +got):\n%s", diff)
	}
}

// TestArgsRoundTrip: what a writer puts in a pod is what the command reads,
// for exec in a step pod and a rank pod and for launch, $ and all.
func TestArgsRoundTrip(t *testing.T) {
	exec := Args{
		Run: "{{workflow.name}}", WorkDir: WorkDir, OutputParams: OutputParamsDir, Step: "U1RFUA==",
		Params:   []string{"epochs={{workflow.parameters.epochs}}", Value("msg", "$(HOME) costs $5 {{x}}"), "empty="},
		Upstream: []string{"threshold={{inputs.parameters.in-threshold}}"},
		Cache:    "on", Iteration: "{{inputs.parameters.iteration}}",
		ArgoStatus: "Failed", ArgoFailures: `"[{\"message\":\"$(HOME)\"}]"`, ArgoSteps: "W10=",
		Image: "example:0.1", Component: "Q09NUA==",
	}
	roundTrip(t, Exec, exec)
	rank := exec
	rank.Gang, rank.Image, rank.Cache, rank.OutputParams = true, "", "", ""
	rank.Argv = []string{"python3", "-c", "print('$1 --run=x')", "--", "-p"}
	rank.CheckpointKeep, rank.CheckpointEvery, rank.ResumeFrom = "3", "5m0s", "run-$1"
	roundTrip(t, Exec, rank)
	launch := exec
	launch.Image, launch.Distributed, launch.ResumeFrom = "", "TEFVTkNI", "run-1"
	roundTrip(t, Launch, launch)
}

// TestArgsOrder: the compiled workflows' arguments are in one fixed order
// (goldens and committed workflows rely on it).
func TestArgsOrder(t *testing.T) {
	a := Args{Gang: true, Run: "r", WorkDir: "w", OutputParams: "o", Step: "s", Params: []string{"p=1"}, Upstream: []string{"u=2"},
		Cache: "on", Iteration: "3", ArgoStatus: "a", ArgoFailures: "b", ArgoSteps: "c", Image: "i", Component: "k", Distributed: "d",
		CheckpointKeep: "2", CheckpointEvery: "1m", ResumeFrom: "f", Argv: []string{"x"}}
	want := "--gang --run=r --work=w --output-params=o --step=s --param=p=1 --upstream=u=2 --cache=on --iteration=3 " +
		"--argo-status=a --argo-failures=b --argo-steps=c --image=i --component=k --distributed=d " +
		"--checkpoint-keep=2 --checkpoint-every=1m --resume-from=f -- x"
	if got := strings.Join(a.Flags(), " "); got != want {
		t.Errorf("Flags =\n%s\nwant\n%s", got, want)
	}
}

// FuzzArgs: any text in any field survives Flags → Kubernetes → parse.
func FuzzArgs(f *testing.F) {
	f.Add("r", "s", "v", "$(HOME)", "--", "-p")
	f.Add("{{workflow.name}}", "a=b", "$$", "", "x y", "--run=evil")
	f.Add("", "=", "\n", "pipectl-b64:", "$", "--gang")
	f.Fuzz(func(t *testing.T, run, step, value, status, a0, a1 string) {
		if strings.Contains(run+step+status+a0+a1, "\x00") {
			return
		}
		a := Args{Run: run, Step: step, Params: []string{Value("p", value)}, ArgoStatus: status, Argv: []string{a0, a1}}
		if v, err := DecodeValue(strings.TrimPrefix(a.Params[0], "p=")); err != nil || v != value {
			t.Fatalf("value %q encoded as %q decodes to %q, %v", value, a.Params[0], v, err)
		}
		roundTrip(t, Exec, a)
	})
}
