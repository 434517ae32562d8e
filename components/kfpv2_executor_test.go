package components

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExecutorInputLists: an artifact input given a loop step's collected
// artifacts (InputLists) is KFP's List[Artifact] in the executor input, one
// artifact per iteration at <i> of the input's directory; another artifact
// input is one artifact at its path.
func TestExecutorInputLists(t *testing.T) {
	c := &Program{
		Inputs:  []ProgramIO{{Name: "many", Type: TypeDataset}, {Name: "one", Type: TypeModel}},
		Outputs: []ProgramIO{{Name: "n", Type: TypeInt}},
	}
	dir := t.TempDir()
	v := Placeholders{
		InputPaths:  map[string]string{"many": filepath.Join(dir, "in", "many"), "one": filepath.Join(dir, "in", "one")},
		InputLists:  map[string]int{"many": 2},
		OutputPaths: map[string]string{"n": filepath.Join(dir, "out", "n")},
		OutputDir:   filepath.Join(dir, "out"),
	}
	text, err := c.executorInput(v)
	if err != nil {
		t.Fatal(err)
	}
	var ei struct {
		Inputs struct {
			Artifacts map[string]struct {
				Artifacts []struct {
					URI  string            `json:"uri"`
					Type map[string]string `json:"type"`
				} `json:"artifacts"`
			} `json:"artifacts"`
		} `json:"inputs"`
	}
	if err := json.Unmarshal([]byte(text), &ei); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for name, a := range ei.Inputs.Artifacts {
		for _, e := range a.Artifacts {
			got[name] = append(got[name], e.URI+" "+e.Type["schemaTitle"])
		}
	}
	want := map[string][]string{
		"many": {filepath.Join(dir, "in", "many", "0") + " system.Dataset", filepath.Join(dir, "in", "many", "1") + " system.Dataset"},
		"one":  {filepath.Join(dir, "in", "one") + " system.Model"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("executor input artifacts (-want +got):\n%s", diff)
	}
}
