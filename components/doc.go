// Package components holds the component spec (kind: Component; package
// kfpv1 reads KFP v1 component files as components), the program a step
// runs (Program) with its placeholders (checked at load, resolved into argv
// and env), and the values' rules. The runtime behind `pipectl exec` (materialise inputs, run,
// publish outputs) is package pipeline/execution; the programs run under
// package components/process.
//
// One type per stage: the loader reads a Component (the spec, with its YAML
// nodes and positions); Component.Program makes its Program once (defaults
// converted to values, nothing of the file's form left), which a step's
// plan holds, travels to a pod as --component and the runtime runs as it
// is, in an Invocation (the program with one execution's values).
//
// # Values as written
//
// A parameter value is text, and it is the text the user wrote: the YAML
// scalar's value, the text after "=" of -p, the file an output parameter's
// program wrote (without trailing "\r" and "\n"). CheckValue checks it
// against its type; nothing rewrites it. What each type accepts (spaces
// around the value allowed, and kept):
//
//	string  any text
//	int     [+-]?[0-9]+, any number of digits
//	float   a finite float64 written [+-]?(D+.?D*|.D+)([eE][+-]?D+)?, D a digit
//	bool    what strconv.ParseBool accepts: 1 t T TRUE true True, 0 f F FALSE false False
//	json    JSON text (encoding/json's json.Valid)
//
// NodeValue gives the text of a YAML literal. For json, a YAML string is
// the JSON text; any other YAML value is written as compact JSON (no
// whitespace) in document order: a mapping as an object whose keys are the
// key scalars' text, a list as an array, and scalars by their YAML tag:
// !!str and !!timestamp as JSON strings of their text, !!null as null,
// !!bool as true or false, !!int and !!float as their text when that is a
// JSON number (RFC 8259), else an error. Aliases are expanded, up to 16 MiB
// of JSON. Non-scalar and "<<" keys, duplicate keys and other tags are
// errors naming their line and column.
//
// A null YAML value (null, ~, nothing) as a default means no default
// (IO.HasDefault, IsNull).
//
// Canonical and Equal give the typed view used only to compare values (a
// step's when): ints as big-integer decimal, floats as float64 in Go's
// shortest form, bools as true/false, json decoded (numbers as float64)
// and re-encoded with sorted keys, strings trimmed.
package components
