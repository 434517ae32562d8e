package cmdutil

import (
	"strings"

	"pipectl.dev/pipectl/components"
)

// ValueFlags reads repeated NAME=VALUE flags (named flag in messages) whose
// values are in the value encoding of components.EncodeValue, decoding each.
func ValueFlags(flag string, flags []string) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range flags {
		name, raw, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return nil, FlagErrorf("%s %q: expected NAME=VALUE", flag, f)
		}
		v, err := components.DecodeValue(raw)
		if err != nil {
			return nil, FlagErrorf("%s %s: %v", flag, name, err)
		}
		out[name] = v
	}
	return out, nil
}
