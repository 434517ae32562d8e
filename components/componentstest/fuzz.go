package componentstest

import (
	"os"
	"path/filepath"
	"testing"
)

// MaxFuzzInput bounds the inputs fuzz targets look at: their properties are
// about shape, not size, and big inputs only slow the search down.
const MaxFuzzInput = 64 << 10

// AddFiles adds the contents of the files matching each glob (the repo's
// own examples and testdata) to f's seed corpus. A glob that matches
// nothing fails f: a seed corpus must not shrink unnoticed.
func AddFiles(f *testing.F, globs ...string) {
	f.Helper()
	for _, g := range globs {
		paths, err := filepath.Glob(g)
		if err != nil || len(paths) == 0 {
			f.Fatalf("seed files %s: none (%v)", g, err)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
}
