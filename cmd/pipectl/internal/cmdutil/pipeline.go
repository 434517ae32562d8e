package cmdutil

import (
	"pipectl.dev/pipectl/pipeline"
)

// LoadPipeline loads the pipeline file and returns it with the -p
// overrides (a malformed one is a usage error) and every parameter's
// value.
func LoadPipeline(file string, params []string) (p *pipeline.Pipeline, overrides, values map[string]string, err error) {
	if overrides, err = pipeline.ParseOverrides(params); err != nil {
		return nil, nil, nil, FlagErrorf("%v", err)
	}
	if p, err = pipeline.Load(file); err != nil {
		return nil, nil, nil, err
	}
	if values, err = p.ResolveParams(overrides); err != nil {
		return nil, nil, nil, err
	}
	return p, overrides, values, nil
}
