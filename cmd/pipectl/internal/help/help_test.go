package help

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/pipeline"
)

func TestTopics(t *testing.T) {
	topics := Topics()
	if len(topics) == 0 {
		t.Fatal("no topics embedded")
	}
	name := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	for _, tp := range topics {
		if !name.MatchString(tp.Name) {
			t.Errorf("topics/%s.md: a topic's name is lower-case words joined by '-'", tp.Name)
		}
		if first, _, _ := strings.Cut(tp.Body, "\n"); !strings.HasPrefix(first, "# ") || tp.Title == "" {
			t.Errorf("topics/%s.md: the first line is the title, \"# Title\"; got %q", tp.Name, first)
		}
		if got, ok := Lookup(tp.Name); !ok || got.Body != tp.Body {
			t.Errorf("Lookup(%q) = %v", tp.Name, ok)
		}
		for _, b := range tp.Blocks() {
			if b.Lang == "" {
				continue
			}
			if strings.HasPrefix(b.Lang, "yml") {
				t.Errorf("topics/%s.md:%d: write ```yaml, not ```%s", tp.Name, b.Line, b.Lang)
			}
		}
	}
	if _, ok := Lookup("no-such-topic"); ok {
		t.Error("Lookup found a topic that does not exist")
	}
}

// TestTopicExamples: every YAML example of every topic is a pipeline or
// component file that validates, or is marked ```yaml fragment (a part of
// one; it must still be YAML). Blocks whose first line is "# file: NAME"
// (any language) are written as NAME next to the topic's examples first,
// so a pipeline may use the component files the topic shows.
func TestTopicExamples(t *testing.T) {
	checked := 0
	for _, tp := range Topics() {
		dir := filepath.Join(t.TempDir(), tp.Name)
		bs := tp.Blocks()
		paths := make([]string, len(bs))
		for i, b := range bs {
			name := b.File
			if name == "" {
				name = fmt.Sprintf("block-%d.yaml", i)
			}
			paths[i] = filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(paths[i]), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(paths[i], []byte(b.Text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for i, b := range bs {
			if b.Lang != "yaml" {
				continue
			}
			at := func(format string, args ...any) {
				t.Helper()
				t.Errorf("topics/%s.md:%d: "+format, append([]any{tp.Name, b.Line}, args...)...)
			}
			var doc struct {
				Kind string `yaml:"kind"`
			}
			err := yaml.Unmarshal([]byte(b.Text), &doc)
			if strings.Contains(b.Info, "fragment") {
				if err != nil {
					at("a fragment that is not YAML: %v", err)
				}
				continue
			}
			switch {
			case err != nil:
				at("not YAML (mark a part of a file ```yaml fragment): %v", err)
			case doc.Kind == "Pipeline":
				if _, err := pipeline.Load(paths[i]); err != nil {
					at("the pipeline does not validate: %v", err)
				}
			case doc.Kind == "Component":
				if _, err := components.Load(paths[i]); err != nil {
					at("the component does not validate: %v", err)
				}
			default:
				at("a YAML example is a whole pipeline or component file (kind: Pipeline or Component) that validates; mark a part of one ```yaml fragment")
			}
			checked++
		}
	}
	t.Logf("%d YAML examples checked", checked)
}

// TestTopicsExplainPaths: each `pipectl explain PATH` a topic names is a field.
func TestTopicsExplainPaths(t *testing.T) {
	re := regexp.MustCompile("pipectl explain ([A-Za-z0-9_.]+)")
	for _, tp := range Topics() {
		for _, m := range re.FindAllStringSubmatch(tp.Body, -1) {
			if _, err := pipeline.Explain(m[1]); err != nil {
				t.Errorf("topics/%s.md names `pipectl explain %s`: %v", tp.Name, m[1], err)
			}
		}
	}
}
