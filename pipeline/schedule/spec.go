package schedule

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/util/validation"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/yamlfile"
	"pipectl.dev/pipectl/pipeline"
)

// Kind is the kind of a schedule file.
const Kind = "Schedule"

// MaxNameLength is the longest schedule name: Argo refuses a CronWorkflow
// name of more than 52 characters (it appends a time to name its runs).
const MaxNameLength = 52

// ScheduledTimeRef is the reference a schedule's param values may hold:
// each run gets its scheduled time there (RFC 3339), as its steps get it
// through {{run.scheduledTime}}.
const ScheduledTimeRef = "{{run.scheduledTime}}"

// File is a `kind: Schedule` file: a pipeline file kept on a cron.
type File struct {
	APIVersion string              `yaml:"apiVersion"`
	Kind       string              `yaml:"kind"`
	Metadata   components.Metadata `yaml:"metadata"`
	// Pipeline is the pipeline file, relative to the schedule file.
	Pipeline string `yaml:"pipeline"`
	// Cron is a five-field cron expression or a descriptor (@daily).
	Cron string `yaml:"cron"`
	// Timezone is the IANA zone the cron is read in (default UTC).
	Timezone string `yaml:"timezone,omitempty"`
	// Params are the runs' parameter values, by name.
	Params map[string]string `yaml:"params,omitempty"`
	// Concurrency is Allow (default), Forbid or Replace.
	Concurrency string `yaml:"concurrency,omitempty"`
	// CatchUp is all, latest (default) or none.
	CatchUp string `yaml:"catchUp,omitempty"`
	// Suspend keeps the schedule from firing.
	Suspend bool `yaml:"suspend,omitempty"`
}

// Schedule is a pipeline kept on a cron, as a backend keeps it.
type Schedule struct {
	// Name is a DNS-1123 label of at most MaxNameLength characters.
	Name string `json:"name"`
	// Pipeline is the pipeline file (absolute once stored by the local backend).
	Pipeline string `json:"pipeline"`
	// Cron and Timezone say when it fires (see ParseCron).
	Cron     string `json:"cron"`
	Timezone string `json:"timezone,omitempty"`
	// Params are the runs' parameter values; ScheduledTimeRef in a value
	// is replaced with the run's scheduled time.
	Params map[string]string `json:"params,omitempty"`
	// Concurrency and CatchUp are the policies (see the constants).
	Concurrency string `json:"concurrency"`
	CatchUp     string `json:"catchUp"`
	// Suspended keeps it from firing (`pipectl schedule suspend`).
	Suspended bool `json:"suspended"`
	// Source is the schedule file it was applied from, if any.
	Source string `json:"source,omitempty"`
	// Created is when it was first created; times before it are not
	// missed (a backfill can run them).
	Created time.Time `json:"created"`
	// Updated is when it was last changed.
	Updated time.Time `json:"updated"`
}

// Default sets the default policies.
func (s *Schedule) Default() {
	if s.Concurrency == "" {
		s.Concurrency = ConcurrencyAllow
	}
	if s.CatchUp == "" {
		s.CatchUp = CatchUpLatest
	}
}

// CronOf parses the schedule's cron in its time zone.
func (s *Schedule) CronOf() (*Cron, error) { return ParseCron(s.Cron, s.Timezone) }

// RunParams are the schedule's params for the run scheduled at t, with
// ScheduledTimeRef replaced by t in RFC 3339.
func (s *Schedule) RunParams(t time.Time) map[string]string {
	out := make(map[string]string, len(s.Params))
	for k, v := range s.Params {
		out[k] = strings.ReplaceAll(v, ScheduledTimeRef, FormatTime(t))
	}
	return out
}

// FormatTime is t as {{run.scheduledTime}} gives it: RFC 3339 in the
// schedule's zone (the offset says which instant).
func FormatTime(t time.Time) string { return t.Format(time.RFC3339) }

// Field names, as errors name them.
const (
	FieldName        = "metadata.name"
	FieldCron        = "cron"
	FieldTimezone    = "timezone"
	FieldConcurrency = "concurrency"
	FieldCatchUp     = "catchUp"
	FieldPipeline    = "pipeline"
	FieldParams      = "params"
)

// FieldError is a problem with one field of a schedule given by flags or
// a stored record (a file's problems are *yamlfile.Error).
type FieldError struct {
	Field, Msg string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Validate checks every field of s (defaults set), returning every problem
// as a *FieldError, joined. It does not read the pipeline (CheckPipeline).
func (s *Schedule) Validate() error {
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if msg := CheckName(s.Name); msg != "" {
		add(FieldName, "%s", msg)
	}
	if s.Pipeline == "" {
		add(FieldPipeline, "missing: name the pipeline file")
	}
	tz := s.Timezone
	if _, err := LoadLocation(tz); err != nil {
		add(FieldTimezone, "%v", err)
		tz = "" // the cron checked on its own
	}
	if _, err := ParseCron(s.Cron, tz); err != nil {
		add(FieldCron, "%v", err)
	}
	if !slices.Contains([]string{ConcurrencyAllow, ConcurrencyForbid, ConcurrencyReplace}, s.Concurrency) {
		add(FieldConcurrency, "unknown policy %q (want Allow, Forbid or Replace)", s.Concurrency)
	}
	if !slices.Contains([]string{CatchUpAll, CatchUpLatest, CatchUpNone}, s.CatchUp) {
		add(FieldCatchUp, "unknown policy %q (want all, latest or none)", s.CatchUp)
	}
	return errors.Join(errs...)
}

// CheckName says what is wrong with a schedule name ("" when nothing).
func CheckName(name string) string {
	switch {
	case name == "":
		return "missing: a schedule needs a name"
	case len(name) > MaxNameLength:
		return fmt.Sprintf("%q is %d characters: a schedule name has at most %d (Kubernetes names a CronWorkflow's runs after it)", name, len(name), MaxNameLength)
	}
	if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 {
		return fmt.Sprintf("%q is not a valid name: %s", name, strings.Join(msgs, "; "))
	}
	return ""
}

// CheckPipeline loads the schedule's pipeline and checks its params
// against it (with a sample scheduled time in place of ScheduledTimeRef).
func (s *Schedule) CheckPipeline() (*pipeline.Pipeline, error) {
	p, err := pipeline.Load(s.Pipeline)
	if err != nil {
		return nil, err
	}
	if _, err := p.ResolveParams(s.RunParams(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))); err != nil {
		return nil, &FieldError{Field: FieldParams, Msg: err.Error()}
	}
	return p, nil
}

// Load reads the schedule file at path: strictly decoded and validated,
// every problem a *yamlfile.Error at its file:line and field, joined. The
// schedule's Pipeline is the pipeline file's path (relative to the
// schedule file's folder, as written); its pipeline is not read.
func Load(path string) (*Schedule, error) {
	f, err := yamlfile.Read(path)
	if err != nil {
		return nil, err
	}
	var sf File
	var errs []error
	if err := f.Decode(f.Root, "", &sf); err != nil {
		// Report what the field checks find too, when the file decodes
		// leniently (an unknown field, say); otherwise the decode errors alone.
		sf = File{}
		if f.Root.Decode(&sf) != nil {
			return nil, err
		}
		errs = append(errs, yamlfile.Split(err)...)
	}
	at := func(path ...any) *yaml.Node {
		n, key, ok := yamlfile.Lookup(f.Root, path...)
		if !ok && key != nil {
			return key
		}
		return n
	}
	if sf.APIVersion != components.APIVersion {
		errs = append(errs, f.Errorf(at("apiVersion"), "apiVersion", "expected apiVersion %s, got %q", components.APIVersion, sf.APIVersion))
	}
	if sf.Kind != Kind {
		errs = append(errs, f.Errorf(at("kind"), "kind", "expected kind %s, got %q", Kind, sf.Kind))
	}
	s := &Schedule{
		Name: sf.Metadata.Name, Pipeline: sf.Pipeline, Cron: sf.Cron, Timezone: sf.Timezone, Params: sf.Params,
		Concurrency: sf.Concurrency, CatchUp: sf.CatchUp, Suspended: sf.Suspend, Source: path,
	}
	if s.Pipeline != "" && !filepath.IsAbs(s.Pipeline) {
		s.Pipeline = filepath.Join(filepath.Dir(path), filepath.FromSlash(s.Pipeline))
	}
	s.Default()
	for _, e := range yamlfile.Split(s.Validate()) {
		var fe *FieldError
		if !errors.As(e, &fe) {
			continue
		}
		errs = append(errs, f.Errorf(at(fieldPath(fe.Field)...), fe.Field, "%s", fe.Msg))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// fieldPath is the YAML path of a field name.
func fieldPath(field string) []any {
	var out []any
	for _, p := range strings.Split(field, ".") {
		out = append(out, p)
	}
	return out
}
