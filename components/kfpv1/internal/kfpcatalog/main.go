// Command kfpcatalog measures how much of a catalogue of KFP v1 component
// files pipectl accepts: every component.yaml under DIR is wrapped in a
// pipeline (one step; a source step per required artifact input) and put
// through `pipectl validate` and `pipectl compile`, as a user would.
//
//	go build -o /tmp/pipectl ./cmd/pipectl
//	go run ./components/kfpv1/internal/kfpcatalog -pipectl /tmp/pipectl DIR
//
// It prints each failure (file and pipectl's first message line), the
// failures grouped by message, and the count of files that validate and
// compile. The catalogue is not part of this repository: DIR is the
// components/ folder of a checkout of kubeflow/pipelines at a v1 release
// (e.g. 1.8.22), where graph components find their tasks' components
// (their GitHub urls name paths of that repository).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"pipectl.dev/pipectl/components"
	"pipectl.dev/pipectl/components/kfpv1"
)

func main() {
	bin := flag.String("pipectl", "pipectl", "the pipectl binary")
	verbose := flag.Bool("v", false, "print every failure")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: kfpcatalog [-pipectl BIN] [-v] DIR")
		os.Exit(2)
	}
	if err := run(*bin, flag.Arg(0), *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "kfpcatalog:", err)
		os.Exit(1)
	}
}

func run(bin, dir string, verbose bool) error {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "component.yaml" {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "kfpcatalog-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	groups := map[string][]string{}
	ok := 0
	for i, file := range files {
		abs, err := filepath.Abs(file)
		if err != nil {
			return err
		}
		msg := check(bin, abs, filepath.Join(tmp, fmt.Sprintf("p%d.yaml", i)))
		if msg == "" {
			ok++
			continue
		}
		rel, _ := filepath.Rel(dir, file)
		if verbose {
			fmt.Printf("FAIL %s\n     %s\n", rel, msg)
		}
		groups[group(msg)] = append(groups[group(msg)], rel)
	}
	fmt.Println()
	for _, g := range slices.SortedFunc(mapsKeys(groups), func(a, b string) int { return len(groups[b]) - len(groups[a]) }) {
		fmt.Printf("%4d  %s\n", len(groups[g]), g)
	}
	fmt.Printf("\nvalidate+compile: %d/%d (%.1f%%)\n", ok, len(files), 100*float64(ok)/float64(max(len(files), 1)))
	return nil
}

func mapsKeys(m map[string][]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

var (
	posRE   = regexp.MustCompile(`\S+\.yaml(:\d+:\d+)?: `)
	quoteRE = regexp.MustCompile(`"[^"]*"|\[\d+\]`)
)

// group reduces a message to its kind: no file, position, names or indices.
func group(msg string) string {
	return quoteRE.ReplaceAllString(posRE.ReplaceAllLiteralString(msg, ""), "_")
}

// check wraps the component file in a pipeline at pipe and returns the first
// line of the first failing pipectl command's message, or "".
func check(bin, file, pipe string) string {
	c, g, err := kfpv1.Load(file)
	if err != nil {
		return firstLine(err.Error())
	}
	data, err := yaml.Marshal(wrap(c, g != nil, file))
	if err != nil {
		return err.Error()
	}
	if err := os.WriteFile(pipe, data, 0o644); err != nil {
		return err.Error()
	}
	for _, args := range [][]string{
		{"validate", pipe},
		{"compile", pipe, "--image-tags", "--no-ship-code", "--artifacts", "s3://bucket/runs", "-o", pipe + ".wf.yaml"},
	} {
		var stderr bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return args[0] + ": " + firstLine(stderr.String()+err.Error())
		}
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// wrap returns a pipeline with one step running the component at file; each
// required input gets a literal of its type, or the output of a source step;
// the step names an image when the component (not a graph) leaves it empty.
func wrap(c *components.Component, graph bool, file string) map[string]any {
	inputs := map[string]any{}
	var steps []any
	for _, in := range c.Inputs {
		if !in.Required() {
			continue
		}
		switch {
		case components.IsArtifact(in.Type):
			src := "src-" + strings.ToLower(strings.ReplaceAll(in.Name, "_", "-"))
			steps = append(steps, map[string]any{
				"name": src,
				"component": map[string]any{
					"apiVersion": components.APIVersion, "kind": "Component",
					"metadata": map[string]any{"name": "source"},
					"image":    "busybox",
					"outputs":  []any{map[string]any{"name": "out", "type": in.Type}},
					"command":  []string{"sh", "-c", `echo x > "$0"`, "{{outputs.out.path}}"},
				},
			})
			inputs[in.Name] = "{{steps." + src + ".outputs.out}}"
		default:
			inputs[in.Name] = literal(in.Type)
		}
	}
	main := map[string]any{"name": "main", "component": file, "inputs": inputs}
	if c.Image == "" && !graph {
		// Left for the user to fill in (image: ''): as a user would, the
		// step names the image it built. (A graph component has no image:
		// its tasks' components have theirs.)
		main["image"] = "my-image:1.0"
	}
	steps = append(steps, main)
	return map[string]any{
		"apiVersion": components.APIVersion, "kind": "Pipeline",
		"metadata": map[string]any{"name": "catalogue"},
		"steps":    steps,
	}
}

func literal(t string) any {
	switch t {
	case components.TypeInt:
		return 1
	case components.TypeFloat:
		return 1.5
	case components.TypeBool:
		return true
	case components.TypeJSON:
		return map[string]any{}
	default:
		return "x"
	}
}
