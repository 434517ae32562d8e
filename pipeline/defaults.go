package pipeline

import "pipectl.dev/pipectl/components/yamlfile"

// DistributedDefaults are a pipeline's defaults for the distributed steps
// of its file: each step that does not set the field gets the pipeline's.
// They do not reach the steps of a nested pipeline (its own file's
// defaults do).
type DistributedDefaults struct {
	// StallTimeout is the default distributed.stallTimeout.
	StallTimeout Duration `yaml:"stallTimeout,omitempty"`
	// StartupTimeout is the default distributed.startupTimeout.
	StartupTimeout Duration `yaml:"startupTimeout,omitempty"`
}

// distributedDefaults checks the pipeline's distributed defaults and
// gives them to each distributed step that does not set its own.
func (v *validator) distributedDefaults() {
	dd := v.p.Distributed
	if dd == nil {
		return
	}
	path := p("distributed", "stallTimeout")
	if n, _, set := yamlfile.Lookup(v.f.Root, path...); set && dd.StallTimeout.Duration < MinStallTimeout {
		v.atValue(path, "expected a duration of at least %s (or no stallTimeout: no stall detection), got %q", MinStallTimeout, n.Value)
		return
	}
	for i := range v.p.Steps {
		d := v.p.Steps[i].Distributed
		if d == nil {
			continue
		}
		if d.StallTimeout.Duration == 0 {
			d.StallTimeout = dd.StallTimeout
		}
		if d.StartupTimeout.Duration == 0 {
			d.StartupTimeout = dd.StartupTimeout
		}
	}
}
