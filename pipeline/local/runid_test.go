package local

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// TestNewRunID: ids drawn in the same second do not collide (16 random bits
// gave hundreds of collisions in 10,000), are DNS-1123 labels and sort by time.
func TestNewRunID(t *testing.T) {
	at := time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	for range 10000 {
		id := NewRunID(strings.Repeat("long-pipeline-name", 5), at)
		if seen[id] {
			t.Fatalf("id %s drawn twice", id)
		}
		seen[id] = true
		if msgs := validation.IsDNS1123Label(id); len(msgs) > 0 {
			t.Fatalf("id %q: %v", id, msgs)
		}
	}
	re := regexp.MustCompile(`^words-20261201-130000-[a-z2-7]{8}$`)
	if id := NewRunID("words", at); !re.MatchString(id) {
		t.Errorf("NewRunID = %q, want it to match %s", id, re)
	}
	if a, b := NewRunID("w", at), NewRunID("w", at.Add(time.Second)); a[:18] >= b[:18] {
		t.Errorf("%s does not sort before %s", a, b)
	}
}

// TestRunIDTaken: a run never overwrites the record of another run with the
// same id.
func TestRunIDTaken(t *testing.T) {
	f := newFixture(t)
	p := f.load(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: taken}
steps:
  - name: a` + shComponent("a", "", "", "true"))
	first, err := f.run(t.Context(), p, nil, func(r *Runner) { r.RunID = "taken-1" })
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.run(t.Context(), p, nil, func(r *Runner) { r.RunID = "taken-1" })
	if err == nil || !strings.Contains(err.Error(), "run taken-1 already exists") {
		t.Fatalf("a second run with the same id: %v, want 'already exists'", err)
	}
	got, err := recordstore.ReadRun(t.Context(), f.store, "taken-1")
	if err != nil || got.Status != record.StatusSucceeded || !got.Started.Equal(first.Started) {
		t.Errorf("the first run's record became %+v, %v", got, err)
	}
}
