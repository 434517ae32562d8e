// Command conformance-probe is the program of the conformance suite's steps
// (see ../doc.go and the test/e2e README). It records what it was given — its
// argv and the part of its environment that belongs to the step contract —
// prints that record on one line ("probe: {...}") and acts on directives
// found among its arguments:
//
//	@seen PATH        write the record (JSON and a newline) to PATH
//	@write PATH TEXT  write TEXT to the file PATH
//	@dir PATH         make a directory PATH holding a.txt ("a\n") and sub/b.txt ("b\n")
//	@rank PATH        write "rank $RANK of $WORLD_SIZE\n" to the file PATH
//	@read PATH        add the files at PATH (a file or a directory) to the record
//	@fail-once        exit 3 unless this step of this run already ran once on this rank
//	@stall-once       on this rank's first attempt of this step of this run,
//	                  say so and block for ever, printing nothing more: rank 1
//	                  goes silent, the other ranks wait for it (as in a collective)
//	@exit N           exit with N once every other directive is done
//
// Every argument, directives included, is recorded as received.
//
// The record is {"argv": [...], "env": ["NAME=value", ...], "read": [...]}:
// argv without the program's name; env sorted, keeping PIPECTL_*, the rank
// variables (WORLD_SIZE, RANK, LOCAL_RANK, LOCAL_WORLD_SIZE, NODE_RANK,
// NNODES, MASTER_ADDR, MASTER_PORT, PET_*), the frameworks' (JAX_*, DMLC_*,
// OMPI_MCA_*) and CASE_* (the cases' own variables); read lists "PATH: rel = content" per file read, in order.
//
// @fail-once and @stall-once keep their markers under $CONFORMANCE_STATE, a folder shared by
// every attempt of a step (the test's, on the host).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	code, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance-probe:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

// record is what the probe saw.
type record struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Read []string `json:"read,omitempty"`
}

var rankEnv = []string{"WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK", "NNODES", "MASTER_ADDR", "MASTER_PORT"}

func kept(name string) bool {
	for _, prefix := range []string{"PIPECTL_", "PET_", "CASE_", "JAX_", "DMLC_", "OMPI_MCA_"} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return slices.Contains(rankEnv, name)
}

func run(args []string) (int, error) {
	rec := record{Argv: args, Env: []string{}}
	if rec.Argv == nil {
		rec.Argv = []string{}
	}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); kept(name) {
			rec.Env = append(rec.Env, kv)
		}
	}
	slices.Sort(rec.Env)

	need := func(i, n int) ([]string, error) {
		if i+n >= len(args) {
			return nil, fmt.Errorf("%s needs %d argument(s)", args[i], n)
		}
		return args[i+1 : i+1+n], nil
	}
	code := 0
	var seen []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "@seen":
			a, err := need(i, 1)
			if err != nil {
				return 0, err
			}
			seen = append(seen, a[0])
			i++
		case "@write":
			a, err := need(i, 2)
			if err != nil {
				return 0, err
			}
			if err := writeFile(a[0], a[1]); err != nil {
				return 0, err
			}
			i += 2
		case "@dir":
			a, err := need(i, 1)
			if err != nil {
				return 0, err
			}
			if err := writeFile(filepath.Join(a[0], "a.txt"), "a\n"); err != nil {
				return 0, err
			}
			if err := writeFile(filepath.Join(a[0], "sub", "b.txt"), "b\n"); err != nil {
				return 0, err
			}
			i++
		case "@rank":
			a, err := need(i, 1)
			if err != nil {
				return 0, err
			}
			if err := writeFile(a[0], fmt.Sprintf("rank %s of %s\n", os.Getenv("RANK"), os.Getenv("WORLD_SIZE"))); err != nil {
				return 0, err
			}
			i++
		case "@read":
			a, err := need(i, 1)
			if err != nil {
				return 0, err
			}
			read, err := readAll(a[0])
			if err != nil {
				return 0, err
			}
			rec.Read = append(rec.Read, read...)
			i++
		case "@fail-once":
			first, err := firstAttempt()
			if err != nil {
				return 0, err
			}
			if first {
				fmt.Println("probe-fail-once: failing the first attempt")
				return 3, nil
			}
		case "@stall-once":
			first, err := firstAttempt()
			if err != nil {
				return 0, err
			}
			if first {
				if rank := os.Getenv("RANK"); rank == "1" {
					fmt.Println("probe-stall-once: rank 1 goes silent")
				} else {
					fmt.Printf("probe-stall-once: rank %s waits for rank 1\n", rank)
				}
				for {
					time.Sleep(time.Hour) // until stopped
				}
			}
		case "@exit":
			a, err := need(i, 1)
			if err != nil {
				return 0, err
			}
			if code, err = strconv.Atoi(a[0]); err != nil {
				return 0, fmt.Errorf("@exit %q: %v", a[0], err)
			}
			i++
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return 0, err
	}
	fmt.Print("probe: ", b.String())
	for _, path := range seen {
		if err := writeFile(path, b.String()); err != nil {
			return 0, err
		}
	}
	return code, nil
}

func writeFile(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), 0o644)
}

// readAll returns "PATH: rel = content" for the file PATH or each file under
// the directory PATH, in path order.
func readAll(path string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(path, p)
		out = append(out, fmt.Sprintf("%s: %s = %q", path, filepath.ToSlash(rel), b))
		return nil
	})
	return out, err
}

// firstAttempt reports whether this is the first attempt of the step on this
// rank, leaving a marker for the next one.
func firstAttempt() (bool, error) {
	state := os.Getenv("CONFORMANCE_STATE")
	if state == "" {
		return false, fmt.Errorf("@fail-once, @stall-once: CONFORMANCE_STATE is not set")
	}
	marker := filepath.Join(state, os.Getenv("PIPECTL_RUN_ID"), os.Getenv("PIPECTL_STEP"), "rank-"+os.Getenv("RANK"))
	if _, err := os.Stat(marker); err == nil {
		return false, nil
	}
	return true, writeFile(marker, "")
}
