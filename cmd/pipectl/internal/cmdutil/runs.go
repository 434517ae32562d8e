package cmdutil

import (
	"context"
	"fmt"
	"strings"

	"pipectl.dev/pipectl/artifacts"
)

// ReadRun reads run id from the store; "latest" names the newest run.
func ReadRun(ctx context.Context, s artifacts.Store, id string) (*artifacts.Run, error) {
	if id != "latest" {
		return artifacts.ReadRun(ctx, s, id)
	}
	runs, err := artifacts.ListRuns(ctx, s)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("no runs in %s", s.Root())
	}
	return runs[0], nil
}

// ExpandLatest replaces a leading "latest/" of an artifact reference with
// the newest run's id.
func ExpandLatest(ctx context.Context, s artifacts.Store, ref string) (string, error) {
	rest, ok := strings.CutPrefix(ref, "latest/")
	if !ok {
		return ref, nil
	}
	r, err := ReadRun(ctx, s, "latest")
	if err != nil {
		return "", err
	}
	return r.ID + "/" + rest, nil
}
