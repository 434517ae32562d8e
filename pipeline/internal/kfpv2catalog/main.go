// Command kfpv2catalog measures how many KFP v2 pipeline files (the
// PipelineSpec YAML kfp.compiler.Compiler writes) pipectl accepts: each
// *.yaml under DIR is loaded (pipeline.Load, as `pipectl validate` does),
// compiled to an Argo Workflow (pipeline/argo, as `pipectl compile` does)
// and checked with Argo's own validator (workflow/validate, as `argo lint`
// does offline).
//
//	go run ./pipeline/internal/kfpv2catalog [-v] [-all] [-run] DIR
//
// With -all, a failing file's every message is printed (with -v), not only
// its first: what each file would need.
//
// With -run, each file that compiles and whose executors need no KFP
// package (no {{$}}) is also run locally (pipeline/local, a store in a
// temporary directory, its params' defaults, or a literal of the param's
// type such as x or 1; 60s each): the programs run
// on this machine, so a file whose image's program is missing here fails.
//
// It prints each failure (with -v: file and pipectl's first message line),
// the failures grouped by message, and the count of files that validate,
// compile and lint. The files are not part of this repository: DIR is
// test_data/sdk_compiled_pipelines/valid of a checkout of kubeflow/pipelines.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/argoproj/argo-workflows/v3/workflow/validate"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/argo"
	"pipectl.dev/pipectl/pipeline/local"
)

func main() {
	verbose := flag.Bool("v", false, "print every failure")
	runLocal := flag.Bool("run", false, "also run the files without {{$}} locally")
	all := flag.Bool("all", false, "with -v, print every message of a failing file")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: kfpv2catalog [-v] [-all] [-run] DIR")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *verbose, *all, *runLocal); err != nil {
		fmt.Fprintln(os.Stderr, "kfpv2catalog:", err)
		os.Exit(1)
	}
}

func run(dir string, verbose, all, runLocal bool) error {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".yaml") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		return err
	}
	groups := map[string][]string{}
	ok, ranOK, ranFail := 0, 0, 0
	for _, file := range files {
		msg, rest := check(file)
		rel, _ := filepath.Rel(dir, file)
		if msg == "" {
			ok++
			if verbose {
				fmt.Printf("OK   %s\n", rel)
			}
			if runLocal {
				tried, err := runFile(file)
				switch {
				case !tried:
				case err != nil:
					ranFail++
					fmt.Printf("RUN FAIL %s\n     %s\n", rel, firstLine(err.Error()))
				default:
					ranOK++
					fmt.Printf("RUN OK   %s\n", rel)
				}
			}
			continue
		}
		if verbose {
			fmt.Printf("FAIL %s\n     %s\n", rel, msg)
			if all {
				for _, m := range rest {
					fmt.Printf("     %s\n", m)
				}
			}
		}
		groups[group(msg)] = append(groups[group(msg)], rel)
	}
	fmt.Println()
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if d := len(groups[b]) - len(groups[a]); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	for _, g := range keys {
		fmt.Printf("%4d  %s\n", len(groups[g]), g)
	}
	fmt.Printf("\nvalidate+compile+lint: %d/%d (%.1f%%)\n", ok, len(files), 100*float64(ok)/float64(max(len(files), 1)))
	if runLocal {
		fmt.Printf("run locally (no {{$}}): %d succeeded, %d failed\n", ranOK, ranFail)
	}
	return nil
}

var (
	posRE   = regexp.MustCompile(`\S+\.yaml(:\d+:\d+)?: `)
	quoteRE = regexp.MustCompile(`"[^"]*"|\[\d+\]|\{\{[^}]*\}\}`)
	chanRE  = regexp.MustCompile(`\.(dag\.tasks|components|executors|parameters|artifacts|inputDefinitions)\.[^.: ]+`)
)

// group reduces a message to its kind: no file, position, names or indices.
func group(msg string) string {
	msg = posRE.ReplaceAllLiteralString(msg, "")
	msg = chanRE.ReplaceAllString(msg, ".$1._")
	msg = strings.ReplaceAll(msg, "root.dag.tasks._", "root.dag.tasks._")
	return quoteRE.ReplaceAllString(msg, "_")
}

// check loads, compiles and lints one file; it returns the first line of
// the first failure, or "", and the other lines of that failure.
func check(file string) (string, []string) {
	p, err := pipeline.Load(file)
	if err != nil {
		return "validate: " + firstLine(err.Error()), otherLines(err.Error())
	}
	wf, err := argo.Compile(p, argo.Options{Image: "pipectl:dev", Artifacts: "s3://bucket/runs"})
	if err != nil {
		return "compile: " + firstLine(err.Error()), otherLines(err.Error())
	}
	if err := validate.ValidateWorkflow(nil, nil, wf, nil, validate.ValidateOpts{Lint: true}); err != nil {
		return "lint: " + firstLine(err.Error()), otherLines(err.Error())
	}
	return "", nil
}

// otherLines are the lines of s after its first.
func otherLines(s string) []string {
	_, rest, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if rest == "" {
		return nil
	}
	return strings.Split(rest, "\n")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// runFile runs the pipeline of file locally when no executor uses {{$}};
// tried is false when it does.
func runFile(file string) (tried bool, err error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return true, err
	}
	if strings.Contains(string(data), "{{$}}") {
		return false, nil
	}
	p, err := pipeline.Load(file)
	if err != nil {
		return true, err
	}
	// A param without a default gets a literal of its type, as a user gives one.
	given := map[string]string{}
	for _, name := range p.ParamOrder {
		if prm := p.Params[name]; prm.Default.Kind == 0 {
			given[name] = map[string]string{"int": "1", "float": "1.5", "bool": "true", "json": "{}"}[prm.Type]
			if given[name] == "" {
				given[name] = "x"
			}
		}
	}
	params, err := p.ResolveParams(given)
	if err != nil {
		return true, err
	}
	tmp, err := os.MkdirTemp("", "kfpv2run-")
	if err != nil {
		return true, err
	}
	defer os.RemoveAll(tmp)
	store, err := artifacts.NewLocal(filepath.Join(tmp, "store"))
	if err != nil {
		return true, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var logs bytes.Buffer
	r := &local.Runner{Store: store, Logs: &logs, Status: io.Discard, WorkDir: filepath.Join(tmp, "work"), GracePeriod: time.Second}
	if _, err := r.Run(ctx, p, params); err != nil {
		return true, fmt.Errorf("%v (log: %s)", err, strings.ReplaceAll(strings.TrimSpace(logs.String()), "\n", " | "))
	}
	return true, nil
}
