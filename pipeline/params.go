package pipeline

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/uris"
)

// params checks the pipeline's params: names, types, and defaults (an
// artifact's a URI, and its metadata: checkMetadata).
func (v *validator) params() {
	pl := v.p
	for _, name := range pl.ParamOrder {
		prm := pl.Params[name]
		if want := components.ValidIdent(name); want != "" {
			v.at(p("params", name), "invalid parameter name %q: expected %s", name, want)
		}
		if components.IsArtifact(prm.Type) {
			// Given by the step of a pipeline that uses this one as its
			// component; run by itself, the URI the run gives, or its
			// default.
			switch {
			case prm.Default.Kind == 0:
			case len(v.chain) > 1:
				v.atValue(p("params", name, "default"), "artifact parameter %q (%s) of a pipeline used as a step's component cannot have a default: the step that uses this pipeline gives it a step output", name, prm.Type)
			default:
				if err := CheckArtifactURI(&prm.Default); err != nil {
					v.atValue(p("params", name, "default"), "invalid default of artifact parameter %q (%s): %v", name, prm.Type, err)
				}
			}
			if prm.Metadata.Kind != 0 {
				v.checkMetadata(name, prm)
			}
			continue
		}
		if prm.Metadata.Kind != 0 {
			v.at(p("params", name, "metadata"), "parameter %q (%s) is a value: only an artifact parameter has metadata", name, prm.Type)
		}
		if !components.IsParam(prm.Type) {
			v.atValue(p("params", name, "type"), "unknown parameter type %q (expected one of: %s; or, in a pipeline used as a step's component, %s)", prm.Type, strings.Join(components.ParamTypes, ", "), strings.Join(components.ArtifactTypes, ", "))
			continue
		}
		if prm.Default.Kind != 0 {
			if _, err := components.NodeValue(prm.Type, &prm.Default); err != nil {
				v.atValue(p("params", name, "default"), "invalid default: %v", err)
			}
		}
	}
}

// ResolveParams returns every parameter's value as written: overrides
// (name=value strings, type-checked) over defaults. A required parameter without a value
// or an unknown name is an error.
func (pl *Pipeline) ResolveParams(overrides map[string]string) (map[string]string, error) {
	var errs []error
	out := map[string]string{}
	for name, raw := range overrides {
		prm, ok := pl.Params[name]
		if !ok {
			errs = append(errs, fmt.Errorf("-p %s: pipeline %s has no parameter %q (params: %s)", name, pl.Metadata.Name, name, strings.Join(pl.ParamOrder, ", ")))
			continue
		}
		if components.IsArtifact(prm.Type) {
			// The URI of an artifact in the store, checked when a step
			// fetches it, or of an object the run imports first.
			if err := uris.CheckArtifactOrImportURI(raw); err != nil {
				errs = append(errs, fmt.Errorf("-p %s: expected the URI of an artifact (%s) in the artifact store or of an object to import: %v", name, prm.Type, err))
				continue
			}
		} else if err := components.CheckValue(prm.Type, raw); err != nil {
			errs = append(errs, fmt.Errorf("-p %s: %v", name, err))
			continue
		}
		out[name] = raw
	}
	for _, name := range pl.ParamOrder {
		if _, ok := out[name]; ok {
			continue
		}
		prm := pl.Params[name]
		if components.IsArtifact(prm.Type) && prm.Default.Kind != 0 {
			out[name] = prm.Default.Value
			continue
		}
		if components.IsArtifact(prm.Type) {
			errs = append(errs, fmt.Errorf("parameter %q is an artifact (%s): give it with -p %s=URI, the URI of an artifact in the artifact store (such as an output of an earlier run: pipectl artifacts ls RUN)", name, prm.Type, name))
			continue
		}
		if prm.Default.Kind == 0 {
			if _, bad := overrides[name]; !bad {
				errs = append(errs, fmt.Errorf("parameter %q (%s) has no default: give it with -p %s=VALUE", name, prm.Type, name))
			}
			continue
		}
		v, err := components.NodeValue(prm.Type, &prm.Default)
		if err != nil {
			errs = append(errs, fmt.Errorf("parameter %q: %v", name, err))
			continue
		}
		out[name] = v
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return out, errors.Join(errs...)
}

// ParseOverrides turns -p name=value flags into a map.
func ParseOverrides(flags []string) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range flags {
		name, value, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("-p %q: expected name=value", f)
		}
		out[name] = value
	}
	return out, nil
}
