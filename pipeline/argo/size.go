package argo

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
)

// MaxWorkflowBytes bounds a compiled Workflow, as JSON (what is sent to the
// API server). The API server keeps an object in etcd, which takes at most
// 1.5 MiB a request by default, and Argo writes the run's status into the
// same object as it runs: 1 MiB leaves it room.
const MaxWorkflowBytes = 1 << 20

// CheckSize refuses wf when its JSON is over MaxWorkflowBytes, naming the
// limit and the biggest value in it (where a large literal usually is).
func CheckSize(wf *wfv1.Workflow) error {
	b, err := json.Marshal(wf)
	if err != nil {
		return err
	}
	if len(b) <= MaxWorkflowBytes {
		return nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	big := &biggest{}
	big.walk(v, nil)
	return fmt.Errorf("the compiled Workflow is %d bytes, over the %d a cluster takes (etcd keeps at most 1.5 MiB an object, and Argo adds the run's status to it): its biggest value is %s (%d bytes); pass large values as artifacts (a file in the store), not as params or constants", len(b), MaxWorkflowBytes, big.path, big.size)
}

// biggest finds the longest string in a decoded JSON value, and its path.
type biggest struct {
	path string
	size int
}

func (b *biggest) walk(v any, path []string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			b.walk(e, append(path, "."+k))
		}
	case []any:
		for i, e := range x {
			b.walk(e, append(path, "["+strconv.Itoa(i)+"]"))
		}
	case string:
		if len(x) > b.size {
			b.size, b.path = len(x), strings.TrimPrefix(strings.Join(path, ""), ".")
		}
	}
}
