package root

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"pipectl.dev/pipectl/cmd/pipectl/internal/help"
	"pipectl.dev/pipectl/components/yamlfile"
)

// newCmdHelp returns `pipectl help [COMMAND | TOPIC]`: a command's help, as
// cobra's help command gives it, or a guide of package help.
func newCmdHelp(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command | topic]",
		Short: "Help about a command, or a guide: pipectl help TOPIC (topics below)",
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			var out []string
			for _, c := range root.Commands() {
				if c.IsAvailableCommand() {
					out = append(out, c.Name())
				}
			}
			return append(out, help.Names()...), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				if t, ok := help.Lookup(args[0]); ok {
					_, err := fmt.Fprint(c.OutOrStdout(), t.Body)
					return err
				}
			}
			cmd, _, err := root.Find(args)
			if err != nil || cmd == nil || (len(args) > 0 && cmd == root) {
				var names []string
				for _, c := range root.Commands() {
					names = append(names, c.Name())
				}
				names = append(names, help.Names()...)
				return fmt.Errorf("no command or help topic %q%s (commands: pipectl help; topics: %s)", strings.Join(args, " "), yamlfile.DidYouMean(strings.Join(args, " "), names), strings.Join(help.Names(), ", "))
			}
			cmd.InitDefaultHelpFlag()
			cmd.InitDefaultVersionFlag()
			return cmd.Help()
		},
	}
}

// topicsUsage is the usage template's section listing the guides, shown
// on the top command's help only.
func topicsUsage() string {
	var b strings.Builder
	b.WriteString("\n\nHelp topics (pipectl help TOPIC; every field of a file: pipectl explain PATH):")
	width := 0
	for _, t := range help.Topics() {
		width = max(width, len(t.Name))
	}
	for _, t := range help.Topics() {
		fmt.Fprintf(&b, "\n  %-*s  %s", width, t.Name, t.Title)
	}
	return fmt.Sprintf("{{if not .HasParent}}{{%q}}{{end}}", b.String())
}

// withTopics is the usage template tmpl with the guides listed after the
// commands (before the flags).
func withTopics(tmpl string) string {
	const flags = `{{if .HasAvailableLocalFlags}}`
	if !strings.Contains(tmpl, flags) {
		return tmpl + topicsUsage()
	}
	return strings.Replace(tmpl, flags, topicsUsage()+flags, 1)
}
