package components

import (
	"fmt"
	"path/filepath"
	"slices"
)

// ProgramVersion is the version of a Program's wire form (its "v" field):
// a reader accepts only its own, so the compiler and the pods must run the
// same pipectl.
const ProgramVersion = 1

// Program is a component as it runs: its declared inputs with their
// defaults as values, its outputs, and its argv and env templates. The
// loader makes it once from the spec (Component.Program); a step's plan
// holds it, `pipectl exec` receives it (--component), and the runtime runs
// it. It is the same for every step that runs the component.
type Program struct {
	// Version is ProgramVersion.
	Version int `json:"v"`
	// Name is the component's metadata.name.
	Name string `json:"name"`
	// Inputs and Outputs are the component's declared inputs and outputs.
	Inputs  []ProgramIO `json:"inputs,omitempty"`
	Outputs []ProgramIO `json:"outputs,omitempty"`
	// Command and Args are the program's argv, with placeholders.
	Command []string `json:"command"`
	Args    []string `json:"args,omitempty"`
	// Env sets environment variables (values may hold placeholders).
	Env []EnvVar `json:"env,omitempty"`
	// WorkingDir is where the program runs: absolute, or relative to Dir
	// (locally) or to the image's WORKDIR (in a pod).
	WorkingDir string `json:"workingDir,omitempty"`
	// Code is the digest of the component's folder (Component.Code).
	Code string `json:"code,omitempty"`

	// Dir is the directory of the component's file on this machine; it
	// does not travel (a pod has the image's WORKDIR, or the code pack).
	Dir string `json:"-"`
}

// ProgramIO is one input or output of a Program.
type ProgramIO struct {
	// Name is referred to by placeholders and by the step's wiring.
	Name string `json:"name"`
	// Type is a parameter or artifact type.
	Type string `json:"type"`
	// Default is the default of an input parameter, as a value
	// (NodeValue of the spec's default).
	Default *string `json:"default,omitempty"`
	// Optional marks an input that may be left out.
	Optional bool `json:"optional,omitempty"`
	// Path is the fixed path the program writes an output at (KFP's fileOutputs).
	Path string `json:"path,omitempty"`
}

// Required reports whether the input must be given a value.
func (io ProgramIO) Required() bool { return io.Default == nil && !io.Optional }

// FilePath is where the program writes the output: its fixed Path (KFP's
// fileOutputs) if it has one, else NAME in the rank's output directory dir.
func (io ProgramIO) FilePath(dir string) string {
	if io.Path != "" {
		return io.Path
	}
	return filepath.Join(dir, io.Name)
}

// Program makes the component's runnable form: each default converted to
// its value once.
func (c *Component) Program() (*Program, error) {
	p := &Program{
		Version: ProgramVersion, Name: c.Metadata.Name,
		Command: c.Command, Args: c.Args, Env: c.Env, WorkingDir: c.WorkingDir, Code: c.Code, Dir: c.Dir,
	}
	for _, in := range c.Inputs {
		io := ProgramIO{Name: in.Name, Type: in.Type, Optional: in.Optional}
		if in.HasDefault() {
			v, err := NodeValue(in.Type, &in.Default)
			if err != nil {
				return nil, fmt.Errorf("component %s: input %q: default: %v", c.Metadata.Name, in.Name, err)
			}
			io.Default = &v
		}
		p.Inputs = append(p.Inputs, io)
	}
	for _, out := range c.Outputs {
		p.Outputs = append(p.Outputs, ProgramIO{Name: out.Name, Type: out.Type, Path: out.Path})
	}
	return p, nil
}

// WithArgv returns the program as a pod runs it, with argv, when set, as
// its command and no args (a distributed step's rank command): its command
// not empty, its placeholders checked against its inputs and outputs (the
// program came over the wire).
func (p *Program) WithArgv(argv []string) (*Program, error) {
	q := p
	if len(argv) > 0 {
		c := *p
		c.Command, c.Args = slices.Clone(argv), nil
		q = &c
	}
	if len(q.Command) == 0 {
		return nil, fmt.Errorf("component %s: empty command", q.Name)
	}
	if err := q.CheckArgv(); err != nil {
		return nil, fmt.Errorf("component %s: %v", q.Name, err)
	}
	return q, nil
}

// Input returns the input called name.
func (p *Program) Input(name string) (ProgramIO, bool) { return findIO(p.Inputs, name) }

// Output returns the output called name.
func (p *Program) Output(name string) (ProgramIO, bool) { return findIO(p.Outputs, name) }

func findIO(ios []ProgramIO, name string) (ProgramIO, bool) {
	for _, io := range ios {
		if io.Name == name {
			return io, true
		}
	}
	return ProgramIO{}, false
}

// RunDir is where the program runs: WorkingDir when absolute, else
// WorkingDir under Dir (the component file's directory locally, the code
// pack in a pod that ships code, else "": the image's WORKDIR).
func (p *Program) RunDir() string { return runDir(p.Dir, p.WorkingDir) }

func runDir(dir, workingDir string) string {
	if filepath.IsAbs(workingDir) {
		return workingDir
	}
	return filepath.Join(dir, workingDir)
}

// CheckArgv checks the placeholders (and {{if}} blocks) of the program's
// command, args and env values against its inputs and outputs.
func (p *Program) CheckArgv() error {
	sig := signature{p.Inputs, p.Outputs}
	for _, l := range []struct {
		name  string
		items []string
	}{{"command", p.Command}, {"args", p.Args}} {
		if i, err := sig.checkList(l.items, true); err != nil {
			return fmt.Errorf("%s[%d]: %v", l.name, i, err)
		}
	}
	for _, e := range p.Env {
		if _, err := sig.checkList([]string{e.Value}, false); err != nil {
			return fmt.Errorf("env %s: %v", e.Name, err)
		}
	}
	return nil
}

// signature is what placeholders are checked against: the names and types
// of a component's inputs and outputs.
type signature struct {
	inputs, outputs []ProgramIO
}

// signature is the component spec's signature.
func (c *Component) signature() signature {
	var s signature
	for _, in := range c.Inputs {
		s.inputs = append(s.inputs, ProgramIO{Name: in.Name, Type: in.Type})
	}
	for _, out := range c.Outputs {
		s.outputs = append(s.outputs, ProgramIO{Name: out.Name, Type: out.Type})
	}
	return s
}

// ParamValues returns the value of every input parameter as written: given
// values type-checked, defaults for the others. An optional input without a
// default is left out; a required one is an error.
func (c *Program) ParamValues(given map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for _, in := range c.Inputs {
		if IsArtifact(in.Type) {
			if val, ok := given[in.Name]; ok {
				out[in.Name] = val // a value for a KFP artifact input: its file's content
			}
			continue
		}
		val, ok := given[in.Name]
		switch {
		case ok:
			if err := CheckValue(in.Type, val); err != nil {
				return nil, fmt.Errorf("input %q: %v", in.Name, err)
			}
			out[in.Name] = val
		case in.Default != nil:
			out[in.Name] = *in.Default
		case in.Required():
			return nil, fmt.Errorf("input parameter %q (%s) has no value", in.Name, in.Type)
		}
	}
	return out, nil
}

// ParamPathInputs names the input parameters the component reads through
// {{inputs.NAME.path}}.
func (c *Program) ParamPathInputs() []string {
	var out []string
	items := append(append([]string{}, c.Command...), c.Args...)
	for _, e := range c.Env {
		items = append(items, e.Value)
	}
	for _, s := range items {
		segs, _ := parseTemplate(s)
		for _, seg := range segs {
			r := seg.ref
			if r == nil || r.Dir != "inputs" || r.Field != "path" || slices.Contains(out, r.Name) {
				continue
			}
			if in, ok := c.Input(r.Name); ok && !IsArtifact(in.Type) {
				out = append(out, r.Name)
			}
		}
	}
	return out
}

// ShipsCode reports whether a cluster run ships the component's folder
// (RunDir) as its code: a pipectl component loaded from a file, whose
// program runs in a folder relative to it. An imported component's code is
// in its image (CodeInImage), and so is that of a component whose
// workingDir is absolute.
func (c *Component) ShipsCode() bool {
	return !c.CodeInImage && c.Dir != "" && !filepath.IsAbs(c.WorkingDir)
}

// RunDir is where the component's program runs (Program.RunDir).
func (c *Component) RunDir() string { return runDir(c.Dir, c.WorkingDir) }
