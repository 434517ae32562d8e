package ui

import (
	"context"
	"fmt"
	"net/http"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/components/record"
)

// object is one stored file a URL names: a file output, or one file of a
// directory output, found through the run record and the output's metadata,
// never from the URL's path directly.
type object struct {
	// Key is the object's key; for a directory output, the output's key.
	Key string
	// Name is the file's name (the output's, or the path inside a directory).
	Name   string
	Type   string
	Size   int64
	SHA256 string
	// Meta is the output's metadata.
	Meta artifacts.Metadata
	// Dir is set for a whole directory output.
	Dir bool
}

// httpError is an error with the HTTP status it answers with.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func notFound(format string, args ...any) error {
	return &httpError{http.StatusNotFound, fmt.Sprintf(format, args...)}
}

// findOutput returns the output rec names: step's output named output and,
// when file is not empty, the file of that directory output. Only outputs
// the record lists and files their metadata lists are found, through the
// store's own key checks.
func findOutput(ctx context.Context, s artifacts.Store, rec *record.Run, step, output, file string) (object, error) {
	st := rec.Step(step)
	if st == nil {
		return object{}, notFound("run %s has no step %q", rec.ID, step)
	}
	var out *record.OutputRecord
	for i := range st.Outputs {
		if st.Outputs[i].Name == output {
			out = &st.Outputs[i]
		}
	}
	if out == nil || out.URI == "" {
		return object{}, notFound("step %s of run %s has no artifact output %q", step, rec.ID, output)
	}
	key, err := artifacts.SplitURI(s, out.URI)
	if err != nil {
		return object{}, notFound("output %s of step %s is not in this store: %v", output, step, err)
	}
	meta, err := artifacts.ReadMetadata(ctx, s, key)
	if err != nil {
		return object{}, err
	}
	o := object{Key: key, Name: output, Type: meta.Type, Size: meta.Size, SHA256: meta.SHA256, Meta: meta}
	switch {
	case file == "" && meta.Kind == artifacts.KindDirectory:
		o.Dir = true
	case file != "":
		if meta.Kind != artifacts.KindDirectory {
			return object{}, notFound("output %s of step %s is a file: it has no %q inside", output, step, file)
		}
		found := false
		for _, e := range meta.Files {
			if e.Path == file {
				o.Key, o.Name, o.Size, o.SHA256, found = key+"/"+file, file, e.Size, e.SHA256, true
			}
		}
		if !found {
			return object{}, notFound("directory output %s of step %s has no file %q", output, step, file)
		}
	}
	return o, nil
}
