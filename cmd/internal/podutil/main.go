package podutil

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Execute runs cmd with args, prints its error on errOut (with a usage hint
// naming program for a usage error) and returns the process's exit code.
func Execute(cmd *cobra.Command, args []string, errOut io.Writer, program string) int {
	cmd.SetArgs(args)
	err := cmd.Execute()
	if err != nil {
		var ee *ExitError
		if !errors.As(err, &ee) || !ee.Silent {
			fmt.Fprintf(errOut, "Error: %v\n", err)
		}
		var fe *FlagError
		if errors.As(err, &fe) {
			fmt.Fprintf(errOut, "Run '%s --help' for usage.\n", program)
		}
	}
	return Code(err)
}
