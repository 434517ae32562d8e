// Command crosscheck type-checks packages, with every package they import,
// from source for other platforms (make vet's check that pipectl builds for
// Linux and macOS on amd64 and arm64):
//
//	go run ./cmd/pipectl/internal/crosscheck [-platforms OS/ARCH,...] PACKAGE...
//
// It catches what breaks a build for another platform (a file whose build
// constraint leaves a name undefined there, an import only one platform has)
// at a fraction of a cross compile's CPU time: nothing is compiled, so
// nothing of the other platforms' build cache is needed. Cgo is off, as in a
// cross build. It prints each platform's error, one per line, and exits 1 if
// there was any.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/tools/go/packages"
)

func main() {
	platforms := flag.String("platforms", "darwin/arm64,darwin/amd64,linux/arm64", "the platforms (OS/ARCH, comma-separated)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "crosscheck: name the packages to check")
		os.Exit(2)
	}
	failed := false
	for p := range strings.SplitSeq(*platforms, ",") {
		began := time.Now()
		n, errs, err := check(p, flag.Args())
		if err != nil {
			fmt.Fprintf(os.Stderr, "crosscheck %s: %v\n", p, err)
			os.Exit(2)
		}
		for _, e := range errs {
			fmt.Fprintf(os.Stderr, "%s: %s\n", p, e)
		}
		failed = failed || len(errs) > 0
		fmt.Printf("crosscheck %s: %d packages type-checked, %d errors (%.1fs)\n", p, n, len(errs), time.Since(began).Seconds())
	}
	if failed {
		os.Exit(1)
	}
}

// check type-checks patterns and their dependencies for platform (OS/ARCH);
// it returns how many packages it checked and their errors.
func check(platform string, patterns []string) (int, []string, error) {
	goos, goarch, ok := strings.Cut(platform, "/")
	if !ok || goos == "" || goarch == "" {
		return 0, nil, fmt.Errorf("platform %q: want OS/ARCH, e.g. darwin/arm64", platform)
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps |
			packages.NeedTypes | packages.NeedSyntax,
		Env: append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0"),
	}
	roots, err := packages.Load(cfg, patterns...)
	if err != nil {
		return 0, nil, err
	}
	if len(roots) == 0 {
		return 0, nil, errors.New("no package matched")
	}
	n := 0
	var errs []string
	packages.Visit(roots, nil, func(p *packages.Package) {
		n++
		for _, e := range p.Errors {
			errs = append(errs, e.Error())
		}
	})
	return n, errs, nil
}
