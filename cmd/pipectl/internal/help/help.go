// Package help is pipectl's guides, `pipectl help TOPIC`: every Markdown
// file in topics/, embedded in the binary so the docs travel with the
// version they describe.
package help

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed topics/*.md
var files embed.FS

// Topic is one guide: topics/NAME.md, titled by its first "# " line.
type Topic struct {
	Name  string
	Title string
	Body  string
}

// Topics lists every guide, sorted by name.
func Topics() []Topic {
	return topicsOf(files)
}

func topicsOf(fsys fs.FS) []Topic {
	names, _ := fs.Glob(fsys, "topics/*.md")
	var out []Topic
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			continue
		}
		body := string(data)
		out = append(out, Topic{Name: strings.TrimSuffix(path.Base(n), ".md"), Title: title(body), Body: body})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// title is the text of body's first "# " line ("" without one).
func title(body string) string {
	for _, line := range strings.Split(body, "\n") {
		if t, ok := strings.CutPrefix(line, "# "); ok {
			return strings.TrimSpace(t)
		}
	}
	return ""
}

// Lookup returns the guide called name.
func Lookup(name string) (Topic, bool) {
	for _, t := range Topics() {
		if t.Name == name {
			return t, true
		}
	}
	return Topic{}, false
}

// Names lists the guides' names.
func Names() []string {
	var out []string
	for _, t := range Topics() {
		out = append(out, t.Name)
	}
	return out
}

// Block is one fenced code block of a topic.
type Block struct {
	// Line is the line of its opening fence, 1-based.
	Line int
	// Lang is the info string's first word (yaml, sh, …), Info all of it.
	Lang, Info string
	Text       string
	// File is the file the block is, named by its first line "# file: NAME"
	// ("" for a block without one).
	File string
}

// Blocks lists the fenced code blocks of the topic, in order.
func (t Topic) Blocks() []Block {
	var out []Block
	var cur *Block
	var fence string
	for i, line := range strings.Split(t.Body, "\n") {
		if cur != nil {
			if strings.TrimSpace(line) == fence {
				first, _, _ := strings.Cut(cur.Text, "\n")
				if name, ok := strings.CutPrefix(strings.TrimSpace(first), "# file: "); ok {
					cur.File = strings.TrimSpace(name)
				}
				out = append(out, *cur)
				cur = nil
				continue
			}
			cur.Text += line + "\n"
			continue
		}
		trimmed := strings.TrimLeft(line, "`~")
		if n := len(line) - len(trimmed); n >= 3 && strings.TrimLeft(line[:n], string(line[0])) == "" {
			info := strings.TrimSpace(trimmed)
			lang, _, _ := strings.Cut(info, " ")
			cur, fence = &Block{Line: i + 1, Lang: lang, Info: info}, line[:n]
		}
	}
	return out
}
