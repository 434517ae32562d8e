package root

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/internal/podutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/cmdutil"
	"pipectl.dev/pipectl/cmd/pipectl/internal/help"
	"pipectl.dev/pipectl/pipeline"
)

var update = flag.Bool("update", false, "rewrite the README's generated command table")

func execute(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ios, _, out, errOut := podutil.Test()
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
	ios, _, _, _ := podutil.Test()
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

// generated are the README's generated parts: its markers and contents.
func generated() []struct{ begin, end, want string } {
	ios, _, _, _ := podutil.Test()
	var topics strings.Builder
	topics.WriteString("| topic | |\n|---|---|\n")
	for _, tp := range help.Topics() {
		fmt.Fprintf(&topics, "| `pipectl help %s` | %s |\n", tp.Name, strings.ReplaceAll(tp.Title, "|", `\|`))
	}
	return []struct{ begin, end, want string }{
		{"<!-- topics: generated from cmd/pipectl/internal/help/topics; go test ./cmd/pipectl/internal/cmd/root -run TestREADMECommands -update -->\n", "<!-- end of topics -->\n", topics.String()},
		{"<!-- commands: generated from pipectl's commands; go test ./cmd/pipectl/internal/cmd/root -run TestREADMECommands -update -->\n", "<!-- end of commands -->\n", commandsTable(NewCmdRoot(&cmdutil.Factory{IOStreams: ios}))},
	}
}

// TestREADMECommands: the README's tables of commands and guides are
// pipectl's commands and topics, as `pipectl help` shows them; -update
// rewrites them.
func TestREADMECommands(t *testing.T) {
	const readme = "../../../../../README.md"
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	changed := false
	for _, g := range generated() {
		i, j := bytes.Index(data, []byte(g.begin)), bytes.Index(data, []byte(g.end))
		if i < 0 || j < i {
			t.Fatalf("README.md has no generated table between\n%s%s", g.begin, g.end)
		}
		got := string(data[i+len(g.begin) : j])
		if got == g.want {
			continue
		}
		if !*update {
			t.Errorf("README.md's generated table is out of date: go test ./cmd/pipectl/internal/cmd/root -run TestREADMECommands -update\ngot:\n%s\nwant:\n%s", got, g.want)
			continue
		}
		data = append(append(append([]byte{}, data[:i+len(g.begin)]...), g.want...), data[j:]...)
		changed = true
	}
	if changed {
		if err := os.WriteFile(readme, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestREADME: the README stays a short entry point (the reference is in
// the guides) and its YAML examples are pipelines that validate.
func TestREADME(t *testing.T) {
	data, err := os.ReadFile("../../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n > 400 {
		t.Errorf("README.md has %d lines: keep it under 400, and put reference material in a guide (cmd/pipectl/internal/help/topics)", n)
	}
	dir := t.TempDir()
	n := 0
	for i, b := range (help.Topic{Body: string(data)}).Blocks() {
		if b.Lang != "yaml" || strings.Contains(b.Info, "fragment") {
			continue
		}
		path := filepath.Join(dir, fmt.Sprintf("block-%d.yaml", i))
		if err := os.WriteFile(path, []byte(b.Text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := pipeline.Load(path); err != nil {
			t.Errorf("README.md:%d: the pipeline does not validate: %v", b.Line, err)
		}
		n++
	}
	if n == 0 {
		t.Error("README.md shows no pipeline")
	}
}
