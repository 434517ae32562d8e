package pipeline

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// reservedMetaPrefixes are the label and annotation key prefixes of
// pipectl's and Argo's own pod metadata.
var reservedMetaPrefixes = []string{"pipectl.dev/", "workflows.argoproj.io/"}

// podMetadata checks steps[i].podMetadata: label keys and values and
// annotation keys as Kubernetes takes them, no key of pipectl's or
// Argo's own, no annotation value holding {{ (Argo would evaluate it in
// the pod's template), not on a distributed step.
func (v *validator) podMetadata(i int) {
	m := v.p.Steps[i].PodMetadata
	if m == nil {
		return
	}
	if v.p.Steps[i].Distributed != nil {
		v.at(v.sp(i, "podMetadata"), "podMetadata is not supported on a distributed step yet (its rank pods are made by its launcher)")
	}
	for _, what := range []string{"labels", "annotations"} {
		kv := m.Labels
		if what == "annotations" {
			kv = m.Annotations
		}
		size := 0
		for _, k := range slices.Sorted(maps.Keys(kv)) {
			path := v.sp(i, "podMetadata", what, k)
			size += len(k) + len(kv[k])
			if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
				v.at(path, "invalid key %q: %s", k, strings.Join(msgs, "; "))
			}
			for _, pre := range reservedMetaPrefixes {
				if strings.HasPrefix(k, pre) {
					v.at(path, "key %q is pipectl's or Argo's own (%s...)", k, pre)
				}
			}
			if what == "labels" {
				if msgs := validation.IsValidLabelValue(kv[k]); len(msgs) > 0 {
					v.atValue(path, "invalid label value %q: %s", kv[k], strings.Join(msgs, "; "))
				}
			} else if strings.Contains(kv[k], "{{") {
				v.atValue(path, "an annotation value holding {{ is not supported (Argo would read it as a template reference)")
			}
		}
		if what == "annotations" && size > 256*1024 {
			v.at(v.sp(i, "podMetadata", what), "annotations of %d bytes: Kubernetes takes at most 256 KiB", size)
		}
	}
}
