package components

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestArgvResolvesPlaceholdersOnce(t *testing.T) {
	c, err := Load("testdata/echo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	params, err := mustProgram(t, c).ParamValues(map[string]string{"msg": "{{inputs.n}} stays literal"})
	if err != nil {
		t.Fatal(err)
	}
	v := Placeholders{
		Params:      params,
		InputPaths:  map[string]string{"data": "/w/inputs/data"},
		InputURIs:   map[string]string{"data": "file:///s/r/s/data"},
		OutputPaths: map[string]string{"out": "/w/outputs/out", "score": "/w/outputs/score"},
	}
	argv, err := mustProgram(t, c).Argv(v)
	if err != nil {
		t.Fatal(err)
	}
	// extra is optional and absent: its element is dropped.
	want := []string{"prog", "--msg={{inputs.n}} stays literal", "2", `{"a":[1,2]}`, "/w/inputs/data", "/w/outputs/out", "/w/outputs/score"}
	if diff := cmp.Diff(want, argv); diff != "" {
		t.Errorf("Argv (-want +got):\n%s", diff)
	}
	env, err := mustProgram(t, c).Environ(v)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"DATA_URI=file:///s/r/s/data"}, env); diff != "" {
		t.Errorf("Environ (-want +got):\n%s", diff)
	}
	if _, err := mustProgram(t, c).ParamValues(map[string]string{"msg": "x", "n": "two"}); err == nil || !strings.Contains(err.Error(), `input "n": expected a whole number (int), got "two"`) {
		t.Errorf("ParamValues with a bad int: %v", err)
	}
	if _, err := mustProgram(t, c).ParamValues(nil); err == nil || !strings.Contains(err.Error(), `input parameter "msg" (string) has no value`) {
		t.Errorf("ParamValues without msg: %v", err)
	}
}

func TestAssignable(t *testing.T) {
	for _, tt := range []struct {
		from, to string
		want     bool
	}{
		{TypeDataset, TypeDataset, true}, {TypeDataset, TypeArtifact, true}, {TypeArtifact, TypeModel, true},
		{TypeDataset, TypeModel, false}, {TypeInt, TypeFloat, true}, {TypeFloat, TypeInt, false},
		{TypeBool, TypeString, true}, {TypeDataset, TypeString, false}, {TypeString, TypeInt, false},
	} {
		if got := Assignable(tt.from, tt.to); got != tt.want {
			t.Errorf("Assignable(%s, %s) = %v", tt.from, tt.to, got)
		}
	}
}

// mustProgram is the runnable form of the loaded component c.
func mustProgram(t testing.TB, c *Component) *Program {
	t.Helper()
	p, err := c.Program()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
