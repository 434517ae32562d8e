// Package cmdutil holds what every pipectl command shares beyond podutil
// (which the pod runtime shares too: streams, exit codes, -o formats): the
// Factory of lazily built dependencies and the -o output.
package cmdutil
