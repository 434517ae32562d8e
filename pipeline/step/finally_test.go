package step

import (
	"encoding/base64"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRunFields(t *testing.T) {
	steps := base64.StdEncoding.EncodeToString([]byte(`[{"step":"prep","task":"prep"},{"step":"train","task":"train"},{"step":"1a","task":"step-1a"},{"step":"notify","task":"notify"}]`))
	failures := `[{"displayName":"loops-x7","phase":"Failed"},{"displayName":"train","phase":"Failed"},` +
		`{"displayName":"train(2:2)","phase":"Failed"},{"displayName":"train(2:2)(0)","phase":"Failed"},{"displayName":"train(0:0)","phase":"Error"},` +
		`{"displayName":"step-1a","phase":"Failed"},{"displayName":"step-1a(1)","phase":"Failed"}]`
	got, err := RunFields("Error", strconv.Quote(failures), steps)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"status": "Failed", "failedSteps": `["train[0]","train[2]","1a"]`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RunFields (-want +got):\n%s", diff)
	}
	got, err = RunFields("Succeeded", "null", steps)
	if err != nil || got["failedSteps"] != "[]" || got["status"] != "Succeeded" {
		t.Errorf("a succeeded run: %v, %v", got, err)
	}
	if _, err := RunFields("Failed", "not json", steps); err == nil {
		t.Error("failures that are not JSON were accepted")
	}
}
