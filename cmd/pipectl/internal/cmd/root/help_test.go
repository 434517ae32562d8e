package root

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/help"
)

var update = flag.Bool("update", false, "rewrite the README's generated command table")

func execute(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ios, _, out, errOut := cmdutil.Test()
	cmd := NewCmdRoot(&cmdutil.Factory{IOStreams: ios, Version: "test"})
	cmd.SetArgs(args)
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

func TestHelpTopics(t *testing.T) {
	topics := help.Topics()
	if len(topics) == 0 {
		t.Fatal("no topics")
	}
	out, _, err := execute(t, "help")
	if err != nil {
		t.Fatal(err)
	}
	cmds := strings.Index(out, "Commands:")
	list := strings.Index(out, "Help topics")
	if cmds < 0 || list < cmds {
		t.Fatalf("pipectl help lists no topics after the commands:\n%s", out)
	}
	for _, tp := range topics {
		if !regexp.MustCompile(`\n  ` + regexp.QuoteMeta(tp.Name) + ` +` + regexp.QuoteMeta(tp.Title) + `\n`).MatchString(out[list:]) {
			t.Errorf("pipectl help does not list topic %s (%s):\n%s", tp.Name, tp.Title, out[list:])
		}
		got, _, err := execute(t, "help", tp.Name)
		if err != nil || got != tp.Body {
			t.Errorf("pipectl help %s: %v, printed %d bytes, want the topic's %d", tp.Name, err, len(got), len(tp.Body))
		}
	}
	// The topics are listed on the top command's help only.
	out, _, err = execute(t, "help", "run")
	if err != nil || !strings.Contains(out, "pipectl run FILE") || strings.Contains(out, "Help topics") {
		t.Errorf("pipectl help run: %v\n%s", err, out)
	}
	_, _, err = execute(t, "help", "loopz")
	if err == nil || !strings.Contains(err.Error(), `no command or help topic "loopz"`) {
		t.Errorf("pipectl help loopz: %v", err)
	}
}

// TestTopicNamesAreNotCommands: `pipectl help NAME` is one thing.
func TestTopicNamesAreNotCommands(t *testing.T) {
	ios, _, _, _ := cmdutil.Test()
	root := NewCmdRoot(&cmdutil.Factory{IOStreams: ios})
	for _, tp := range help.Topics() {
		for _, c := range root.Commands() {
			if c.Name() == tp.Name || c.HasAlias(tp.Name) {
				t.Errorf("topic %s has the name of a command: rename topics/%s.md", tp.Name, tp.Name)
			}
		}
	}
}

func TestExplainCommand(t *testing.T) {
	out, _, err := execute(t, "explain", "pipeline.steps.distributed.stallTimeout")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"FIELD:    stallTimeout <duration>", "PATH:     pipeline.steps.distributed.stallTimeout", "DEFAULT:  off", "DESCRIPTION:\n    How long the gang"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain stallTimeout: no %q in\n%s", want, out)
		}
	}
	out, _, err = execute(t, "explain", "steps.distributed")
	if err != nil || !strings.Contains(out, "FIELDS:\n  nodes\t<integer> -required-\n") {
		t.Errorf("explain steps.distributed: %v\n%s", err, out)
	}
	out, _, err = execute(t, "explain", "steps.distributed.framework")
	if err != nil || !strings.Contains(out, "VALUES:   torch, jax, xgboost, mpi\n") {
		t.Errorf("explain framework: %v\n%s", err, out)
	}
	out, _, err = execute(t, "explain", "component", "--recursive")
	if err != nil || !strings.Contains(out, "    inputs\t<[]object>\n      name\t<string> -required-\n") {
		t.Errorf("explain component --recursive: %v\n%s", err, out)
	}
	_, _, err = execute(t, "explain", "steps.retires")
	if err == nil || !strings.Contains(err.Error(), `did you mean "retries"?`) {
		t.Errorf("explain steps.retires: %v", err)
	}
}

// commandsTable is the README's table of commands: every command a user
// runs, from the commands themselves.
func commandsTable(root *cobra.Command) string {
	var b strings.Builder
	b.WriteString("| command | what it does |\n|---|---|\n")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if !sub.IsAvailableCommand() || sub.GroupID == groupPod || sub.Name() == "completion" {
				continue
			}
			if sub.Runnable() {
				fmt.Fprintf(&b, "| `%s` | %s |\n", strings.ReplaceAll(sub.UseLine(), "|", `\|`), strings.ReplaceAll(sub.Short, "|", `\|`))
			}
			walk(sub)
		}
	}
	walk(root)
	return b.String()
}

const (
	tableBegin = "<!-- commands: generated from pipectl's commands; go test ./cmd/pipectl/internal/cmd/root -run TestREADMECommands -update -->\n"
	tableEnd   = "<!-- end of commands -->\n"
)

// TestREADMECommands: the README's command table is pipectl's commands,
// as `pipectl help` shows them; -update rewrites it.
func TestREADMECommands(t *testing.T) {
	const readme = "../../../../../README.md"
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(data, []byte(tableBegin)), bytes.Index(data, []byte(tableEnd))
	if i < 0 || j < i {
		t.Fatalf("README.md has no generated command table between\n%s%s", tableBegin, tableEnd)
	}
	ios, _, _, _ := cmdutil.Test()
	want := commandsTable(NewCmdRoot(&cmdutil.Factory{IOStreams: ios}))
	got := string(data[i+len(tableBegin) : j])
	if got == want {
		return
	}
	if *update {
		out := append(append(append([]byte{}, data[:i+len(tableBegin)]...), want...), data[j:]...)
		if err := os.WriteFile(readme, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's command table is not pipectl's commands: go test ./cmd/pipectl/internal/cmd/root -run TestREADMECommands -update\ngot:\n%s\nwant:\n%s", got, want)
}
