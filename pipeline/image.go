package pipeline

import (
	"strings"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components/yamlfile"
)

// ImageProblem describes what is wrong with an image reference, or "": the
// one rule `validate` and `compile` both apply.
func ImageProblem(image string) string {
	if strings.ContainsAny(image, " \t\r\n{}$") {
		return "an image reference has no spaces, braces or $"
	}
	return ""
}

// image refuses the image of steps[i] that compile would refuse: at the
// step's image, or at its component's.
func (v *validator) image(i int) {
	s := &v.p.Steps[i]
	if s.Image != "" {
		if msg := ImageProblem(s.Image); msg != "" {
			v.atValue(v.sp(i, "image"), "image %q: %s", s.Image, msg)
		}
		return
	}
	if s.Resolved == nil || s.Resolved.Image == "" {
		return
	}
	if msg := ImageProblem(s.Resolved.Image); msg != "" {
		path := v.sp(i, "component")
		if n := yamlfile.Deref(&s.Component); n.Kind == yaml.MappingNode {
			if _, _, ok := yamlfile.Lookup(n, "image"); ok {
				path = v.sp(i, "component", "image")
			}
		}
		v.atValue(path, "component %s: image %q: %s", s.Resolved.Metadata.Name, s.Resolved.Image, msg)
	}
}
