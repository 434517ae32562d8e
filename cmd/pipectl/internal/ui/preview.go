package ui

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/pipeline/runview"
)

// Preview kinds.
const (
	PreviewMetrics = "metrics"
	PreviewJSON    = "json"
	PreviewCSV     = "csv"
	PreviewImage   = "image"
	PreviewText    = "text"
	PreviewBinary  = "binary"
)

// Preview is what the run page shows of an output: the head of its bytes
// rendered by kind.
type Preview struct {
	Kind string
	// Text is the text, or the pretty-printed JSON.
	Text string
	// Header and Rows are a CSV head or a metrics table.
	Header []string
	Rows   [][]string
	// Truncated says the preview shows only the start of the object.
	Truncated bool
}

const (
	previewBytes = 256 << 10 // read at most this much of an object
	previewRows  = 20        // CSV rows shown
	textBytes    = 64 << 10  // text shown
)

// imageType says whether t is an image type browsers show (not SVG: it
// can carry scripts).
func imageType(t string) bool {
	switch t {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

// preview reads the head of o and decides how to show it.
func (s *server) preview(ctx context.Context, o object) (*Preview, error) {
	if o.Dir {
		return nil, nil
	}
	if t, _ := s.contentType(ctx, o); imageType(t) {
		return &Preview{Kind: PreviewImage}, nil
	}
	r, err := artifacts.GetRange(ctx, s.Store, o.Key, 0, previewBytes)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return makePreview(o.Name, o.Type, data, o.Size > int64(len(data))), nil
}

// makePreview decides how to show data, the head of an object named name
// of the given output type; truncated says there is more.
func makePreview(name, typ string, data []byte, truncated bool) *Preview {
	ext := strings.ToLower(path.Ext(name))
	if imageType(http.DetectContentType(data)) {
		return &Preview{Kind: PreviewImage}
	}
	trimmed := bytes.TrimSpace(data)
	if !truncated && (typ == "Metrics" || ext == ".json" || bytes.HasPrefix(trimmed, []byte("{")) || bytes.HasPrefix(trimmed, []byte("["))) && json.Valid(trimmed) {
		if ms, ok := runview.ParseMetrics(trimmed); ok && typ == "Metrics" {
			p := &Preview{Kind: PreviewMetrics, Header: []string{"metric", "value"}}
			for _, m := range ms {
				p.Rows = append(p.Rows, []string{m.Name, m.Value})
			}
			return p
		}
		var buf bytes.Buffer
		if json.Indent(&buf, trimmed, "", "  ") == nil {
			text, cut := clip(buf.Bytes(), textBytes)
			return &Preview{Kind: PreviewJSON, Text: text, Truncated: cut}
		}
	}
	if !isText(data) {
		return &Preview{Kind: PreviewBinary}
	}
	if ext == ".csv" || ext == ".tsv" || typ == "Dataset" {
		if p, ok := csvHead(data, ext == ".tsv"); ok {
			p.Truncated = p.Truncated || truncated
			return p
		}
	}
	text, cut := clip(data, textBytes)
	return &Preview{Kind: PreviewText, Text: text, Truncated: cut || truncated}
}

// csvHead parses the first rows of a CSV (or TSV) text: at least two
// columns and two rows, every row as wide as the header.
func csvHead(data []byte, tabs bool) (*Preview, bool) {
	cr := csv.NewReader(bytes.NewReader(data))
	if tabs {
		cr.Comma = '\t'
	}
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err != nil || len(header) < 2 {
		return nil, false
	}
	p := &Preview{Kind: PreviewCSV, Header: header}
	for {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			// The head may end in the middle of a row.
			if len(p.Rows) == 0 {
				return nil, false
			}
			p.Truncated = true
			break
		}
		if len(p.Rows) == previewRows {
			p.Truncated = true
			break
		}
		p.Rows = append(p.Rows, row)
	}
	return p, len(p.Rows) > 0
}

// isText says data looks like text: valid UTF-8 (but for a rune cut at the
// end) without NUL bytes.
func isText(data []byte) bool {
	if bytes.IndexByte(data, 0) >= 0 {
		return false
	}
	for i := 0; i < utf8.UTFMax && len(data) > 0 && !utf8.Valid(data); i++ {
		data = data[:len(data)-1]
	}
	return utf8.Valid(data)
}

// clip returns at most n bytes of data as text, cut at a line end when it
// has to be cut.
func clip(data []byte, n int) (string, bool) {
	if len(data) <= n {
		return string(data), false
	}
	data = data[:n]
	if i := bytes.LastIndexByte(data, '\n'); i > 0 {
		data = data[:i+1]
	}
	return strings.ToValidUTF8(string(data), ""), true
}
