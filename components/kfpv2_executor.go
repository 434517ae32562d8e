package components

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The KFP v2 executor protocol. {{executor.input}} (KFP's {{$}}) is the
// executor input JSON as KFP's launcher builds it for the program:
//
//	{"inputs": {"parameterValues": {NAME: VALUE},
//	            "artifacts": {NAME: {"artifacts": [{"name", "type": {"schemaTitle"}, "uri", "metadata"}]}}},
//	 "outputs": {"parameters": {NAME: {"outputFile": PATH}},
//	             "artifacts": {NAME: {"artifacts": [{"name", "type", "uri", "metadata"}]}},
//	             "outputFile": PATH}}
//
// A parameter value is the JSON value of its text as written (a string
// becomes a JSON string; an int, float, bool or json value is its text). An
// artifact's uri is its local path (as in KFP's local runner, where a uri
// that is not a remote one is the path the program reads and writes); an
// input given the artifacts of a loop step's iterations (KFP's
// List[Artifact], dsl.Collected) lists one artifact per iteration, its uri
// the iteration's entry <i> of the input's directory. An optional input
// without a value is left out.
//
// outputs.outputFile is ExecutorOutputFile in the rank's output directory.
// When the program writes it, Publish reads it first: each of its
// parameterValues is written to the output parameter's file (a string as
// its text, any other value as JSON), which is then published as any output.

// ExecutorOutputFile is the name of the file, in a rank's output
// directory, where a program given {{executor.input}} writes its executor
// output (never an output's name: names hold no dot).
const ExecutorOutputFile = ".executor_output.json"

// usesExecutorInput reports whether command, args or env use {{executor.input}}.
func (c *Program) usesExecutorInput() bool {
	for _, list := range [][]string{c.Command, c.Args} {
		for _, s := range list {
			if strings.Contains(s, "{{executor.input}}") {
				return true
			}
		}
	}
	for _, e := range c.Env {
		if strings.Contains(e.Value, "{{executor.input}}") {
			return true
		}
	}
	return false
}

// schemaTitle is KFP's artifact type of a pipectl artifact type.
func schemaTitle(t string) string {
	switch t {
	case TypeDataset, TypeModel, TypeMetrics:
		return "system." + t
	}
	return "system.Artifact"
}

type execArtifact struct {
	Name     string            `json:"name"`
	Type     map[string]string `json:"type"`
	URI      string            `json:"uri"`
	Metadata json.RawMessage   `json:"metadata"`
}

// noMetadata is the metadata of an artifact that has none.
const noMetadata = "{}"

type execArtifacts struct {
	Artifacts []execArtifact `json:"artifacts"`
}

// executorInput returns the executor input JSON for the values v.
func (c *Program) executorInput(v Placeholders) (string, error) {
	params := map[string]json.RawMessage{}
	arts := map[string]execArtifacts{}
	for _, in := range c.Inputs {
		if IsArtifact(in.Type) {
			p, ok := v.InputPaths[in.Name]
			if !ok {
				continue
			}
			n, list := v.InputLists[in.Name]
			if !list {
				meta := json.RawMessage(noMetadata)
				if m, ok := v.InputMetadata[in.Name]; ok {
					meta = m
				}
				arts[in.Name] = execArtifacts{Artifacts: []execArtifact{{Name: in.Name, Type: map[string]string{"schemaTitle": schemaTitle(in.Type)}, URI: p, Metadata: meta}}}
				continue
			}
			// The artifacts of a loop step's iterations (KFP's
			// List[Artifact]): one entry each, its <i> in the directory.
			entries := make([]execArtifact, n)
			for i := range entries {
				entries[i] = execArtifact{Name: in.Name, Type: map[string]string{"schemaTitle": schemaTitle(in.Type)}, URI: filepath.Join(p, strconv.Itoa(i)), Metadata: json.RawMessage(noMetadata)}
			}
			arts[in.Name] = execArtifacts{Artifacts: entries}
			continue
		}
		val, ok := v.Params[in.Name]
		if !ok {
			continue
		}
		raw, err := jsonValue(in.Type, val)
		if err != nil {
			return "", fmt.Errorf("input %q: %v", in.Name, err)
		}
		params[in.Name] = raw
	}
	outParams := map[string]map[string]string{}
	outArts := map[string]execArtifacts{}
	dir := v.OutputDir
	for _, out := range c.Outputs {
		p, ok := v.OutputPaths[out.Name]
		if !ok {
			return "", fmt.Errorf("no path for output %q", out.Name)
		}
		if IsArtifact(out.Type) {
			outArts[out.Name] = execArtifacts{Artifacts: []execArtifact{{Name: out.Name, Type: map[string]string{"schemaTitle": schemaTitle(out.Type)}, URI: p, Metadata: json.RawMessage(noMetadata)}}}
		} else {
			outParams[out.Name] = map[string]string{"outputFile": p}
		}
	}
	if dir == "" {
		return "", fmt.Errorf("{{executor.input}}: no output directory")
	}
	doc := map[string]any{
		"inputs":  map[string]any{"parameterValues": params, "artifacts": arts},
		"outputs": map[string]any{"parameters": outParams, "artifacts": outArts, "outputFile": filepath.Join(dir, ExecutorOutputFile)},
	}
	b, err := json.Marshal(doc)
	return string(b), err
}

// jsonValue is the JSON value of a parameter's text: a string as a JSON
// string, any other type its text as written.
func jsonValue(t, val string) (json.RawMessage, error) {
	if t == TypeString || t == "" {
		b, err := json.Marshal(val)
		return b, err
	}
	s := strings.TrimSpace(val)
	if !json.Valid([]byte(s)) {
		return nil, fmt.Errorf("%s value %q is not a JSON value", t, val)
	}
	return json.RawMessage(s), nil
}

// ApplyExecutorOutput reads the executor output file the program of a
// component using {{executor.input}} wrote in rank 0's output directory
// dir, if any, and writes each output parameter value it gives to the
// output's file.
func (c *Program) ApplyExecutorOutput(dir string) error {
	if !c.usesExecutorInput() {
		return nil
	}
	path := filepath.Join(dir, ExecutorOutputFile)
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("executor output: %v", err)
	}
	var doc struct {
		ParameterValues map[string]json.RawMessage `json:"parameterValues"`
		Artifacts       map[string]json.RawMessage `json:"artifacts"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("executor output %s: not the executor output JSON: %v", ExecutorOutputFile, err)
	}
	var errs []string
	for _, name := range sortedKeys(doc.ParameterValues) {
		out, ok := c.Output(name)
		if !ok || IsArtifact(out.Type) {
			errs = append(errs, fmt.Sprintf("parameterValues gives %q, which is not an output parameter of component %s", name, c.Name))
			continue
		}
		raw := doc.ParameterValues[name]
		text := string(raw)
		var s string
		if json.Unmarshal(raw, &s) == nil {
			text = s
		}
		if err := writeFile(out.FilePath(dir), text); err != nil {
			errs = append(errs, fmt.Sprintf("output %q: %v", name, err))
		}
	}
	for _, name := range sortedKeys(doc.Artifacts) {
		if out, ok := c.Output(name); !ok || !IsArtifact(out.Type) {
			errs = append(errs, fmt.Sprintf("artifacts gives %q, which is not an output artifact of component %s", name, c.Name))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("executor output: %s", strings.Join(errs, "; "))
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// withExecutorInput sets v.ExecutorInput when the component uses it.
func (c *Program) withExecutorInput(v *Placeholders) error {
	if v.ExecutorInput != "" || !c.usesExecutorInput() {
		return nil
	}
	in, err := c.executorInput(*v)
	if err != nil {
		return fmt.Errorf("component %s: {{executor.input}}: %w", c.Name, err)
	}
	v.ExecutorInput = in
	return nil
}

// writeFile writes a value to the file at dest, creating its directory.
func writeFile(dest, val string) error {
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dest, []byte(val), 0o644)
}
