package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// overlayExecCmd is the first argument by which the agent runs itself as the helper that
// starts a container of a pulled image (overlayExec).
const overlayExecCmd = "overlay-exec"

// overlayExec is that helper: started by the agent in a mount namespace of its own
// (CLONE_NEWNS, mounts private), it mounts an overlay of lower (the image's unpacked root
// file system, never written) with upper and work (the container's folders) at merged,
// then executes the command after "--" (bubblewrap) in its place, with its environment.
// The mount goes with the namespace when the container's last process exits.
// Arguments: LOWER UPPER WORK MERGED -- ARGV...
func overlayExec(args []string) error {
	if len(args) < 6 || args[4] != "--" {
		return errors.New("usage: " + overlayExecCmd + " LOWER UPPER WORK MERGED -- ARGV...")
	}
	lower, upper, work, merged := args[0], args[1], args[2], args[3]
	for _, d := range []string{lower, upper, work} {
		if strings.ContainsAny(d, ",:") {
			return fmt.Errorf("overlay folder %q holds a comma or colon, which mount options cannot carry", d)
		}
	}
	opts := "lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work
	if err := syscall.Mount("overlay", merged, "overlay", 0, opts); err != nil {
		return fmt.Errorf("mount an overlay of %s at %s: %w", lower, merged, err)
	}
	argv := args[5:]
	return syscall.Exec(argv[0], argv, os.Environ())
}
