// Package yamlfile loads the YAML spec files of pipectl strictly and keeps
// their positions, so every problem can be reported as file:line:column with
// the field it concerns.
//
// Decoding checks every mapping key against the yaml tags of the Go type it
// decodes into: an unknown field is an error that lists the expected ones.
package yamlfile
