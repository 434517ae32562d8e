// Package cmdutil holds what every pipectl command shares: IOStreams, the
// Factory of lazily built dependencies, output formats and exit codes.
package cmdutil
