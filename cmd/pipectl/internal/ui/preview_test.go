package ui

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMakePreview(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	cases := []struct {
		name, file, typ, data string
		truncated             bool
		want                  *Preview
	}{
		{"metrics", "metrics", "Metrics", `{"accuracy": 0.9, "loss": 0.25}`, false,
			&Preview{Kind: PreviewMetrics, Header: []string{"metric", "value"}, Rows: [][]string{{"accuracy", "0.9"}, {"loss", "0.25"}}}},
		{"json", "config.json", "Artifact", `{"b":[1,2],"a":"x"}`, false,
			&Preview{Kind: PreviewJSON, Text: "{\n  \"b\": [\n    1,\n    2\n  ],\n  \"a\": \"x\"\n}"}},
		{"truncated json is text", "big.json", "Artifact", `{"b":[1,2`, true,
			&Preview{Kind: PreviewText, Text: `{"b":[1,2`, Truncated: true}},
		{"csv", "train.csv", "Dataset", "age,left\n31,0\n45,1\n", false,
			&Preview{Kind: PreviewCSV, Header: []string{"age", "left"}, Rows: [][]string{{"31", "0"}, {"45", "1"}}}},
		{"csv head cut mid-row", "train.csv", "Dataset", "age,left\n31,0\n45,\"1", true,
			&Preview{Kind: PreviewCSV, Header: []string{"age", "left"}, Rows: [][]string{{"31", "0"}}, Truncated: true}},
		{"a dataset that is not csv", "data", "Dataset", "just words\n", false,
			&Preview{Kind: PreviewText, Text: "just words\n"}},
		{"text", "notes", "Artifact", "héllo\n", false, &Preview{Kind: PreviewText, Text: "héllo\n"}},
		{"binary", "model.pt", "Model", "PK\x03\x04\x00\x00bin", false, &Preview{Kind: PreviewBinary}},
		{"image", "plot", "Artifact", png, false, &Preview{Kind: PreviewImage}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := makePreview(c.file, c.typ, []byte(c.data), c.truncated)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPreviewLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString("a,b\n")
	for range 100 {
		b.WriteString("1,2\n")
	}
	p := makePreview("x.csv", "Dataset", []byte(b.String()), false)
	if p.Kind != PreviewCSV || len(p.Rows) != previewRows || !p.Truncated {
		t.Errorf("CSV of 100 rows: kind %s, %d rows, truncated %v; want csv, %d, true", p.Kind, len(p.Rows), p.Truncated, previewRows)
	}
	long := strings.Repeat("line of text\n", textBytes/13+100)
	p = makePreview("log", "Artifact", []byte(long), false)
	if p.Kind != PreviewText || len(p.Text) > textBytes || !p.Truncated || !strings.HasSuffix(p.Text, "\n") {
		t.Errorf("long text: kind %s, %d bytes, truncated %v", p.Kind, len(p.Text), p.Truncated)
	}
	if !isText([]byte("é")[:1]) {
		t.Errorf("a rune cut at the end is still text")
	}
}
