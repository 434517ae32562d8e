// Package yamlfile loads the YAML spec files of pipectl strictly and keeps
// their positions, so every problem can be reported as file:line:column with
// the field it concerns.
//
// Decoding checks every mapping key against the yaml tags of the Go type it
// decodes into: an unknown field is an error that lists the expected ones.
//
// A spec file is one YAML document of UTF-8 text: Parse rejects an empty or
// comment-only file, a second non-empty document, a NUL byte, a control
// character other than tab, CR and LF, and bytes that are not UTF-8, each
// at its line and column (columns count characters).
package yamlfile
