package stepcache

import (
	"testing"

	"pipectl.dev/pipectl/components"
)

// TestFingerprintForm: the fingerprint of a fixed invocation is what
// pipectl computed before components.Program (when it hashed the component
// spec), so caches filled by an earlier pipectl are still hit. The values
// were computed by that pipectl; a change in fpComponent breaks them.
func TestFingerprintForm(t *testing.T) {
	d := "5"
	p := &components.Program{Version: components.ProgramVersion, Name: "train",
		Inputs: []components.ProgramIO{{Name: "data", Type: "Dataset"}, {Name: "epochs", Type: "int"},
			{Name: "lr", Type: "float", Default: &d}, {Name: "opt", Type: "string", Optional: true}},
		Outputs: []components.ProgramIO{{Name: "model", Type: "Model"}, {Name: "loss", Type: "float", Path: "/tmp/loss"}},
		Command: []string{"python3", "train.py"}, Args: []string{"{{inputs.epochs}}", "{{inputs.data.path}}", "{{outputs.model.path}}"},
		Env:        []components.EnvVar{{Name: "A", Value: "{{inputs.lr}}"}},
		WorkingDir: "sub", Code: "sha256:abc",
	}
	for i, tt := range []struct {
		argv []string
		want string
	}{
		{nil, "4195b846f46641a2aea27bd18357f7501c9b0878bed609bd72944fe9e9b859ec"},
		{[]string{"torchrun", "{{inputs.epochs}}"}, "4a79cf7fc166b4c18403611f056bf86b7042ba4eb04f7241721ab14834b002db"},
	} {
		c, err := p.WithArgv(tt.argv)
		if err != nil {
			t.Fatal(err)
		}
		inv := &components.Invocation{Component: c, Image: "img@sha256:1", Run: "r", Step: "s",
			Params: map[string]string{"epochs": "3"}, Inputs: map[string]string{"data": "file:///x"}, Env: []string{"E=1"}}
		fp, err := Fingerprint(t.Context(), inv, map[string]string{"data": "abc"}, Shape{Nodes: 2, Procs: 1})
		if err != nil {
			t.Fatal(err)
		}
		if fp != tt.want {
			t.Errorf("case %d: fingerprint %s, want %s (the form pipectl has always hashed)", i, fp, tt.want)
		}
	}
}
