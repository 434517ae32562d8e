package process

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLineWriter(t *testing.T) {
	var mu sync.Mutex
	var log bytes.Buffer
	tail := NewTail(2)
	a := NewLineWriter(&mu, "[a] ", tail, &log, nil)
	b := NewLineWriter(&mu, "[b] ", tail, &log)
	a.Write([]byte("one\ntw"))
	b.Write([]byte("three\r\n"))
	a.Write([]byte("o\nfour"))
	a.Flush()
	if got, want := log.String(), "[a] one\n[b] three\n[a] two\n[a] four\n"; got != want {
		t.Errorf("log = %q, want %q", got, want)
	}
	if diff := cmp.Diff([]string{"[a] two", "[a] four"}, tail.Lines()); diff != "" {
		t.Errorf("tail (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"two", "four"}, a.Last()); diff != "" {
		t.Errorf("Last (-want +got):\n%s", diff)
	}
}

// TestLineWriterLines: what reaches the log for each shape of output, as
// written in the given chunks (a "+" between chunks advances the clock by
// ProgressInterval).
func TestLineWriterLines(t *testing.T) {
	long := strings.Repeat("x", MaxLine)
	for _, tc := range []struct {
		name   string
		chunks []string
		want   []string
	}{
		{"lines", []string{"a\nb\n", "c"}, []string{"a", "b", "c"}},
		{"empty lines", []string{"\n\r\n\n"}, []string{"", "", ""}},
		{"crlf split", []string{"a\r", "\nb\r\n"}, []string{"a", "b"}},
		{"progress then newline", []string{"\r 10%", "\r 50%\r100%\r", "\ndone\n"}, []string{"100%", "done"}},
		{"progress overwritten by text", []string{"10%\r50%\rfinished\n"}, []string{"finished"}},
		{"progress left at flush", []string{"10%\r20%\r"}, []string{"20%"}},
		{"progress shown every interval", []string{"1%\r", "+", "2%\r", "3%\r", "+", "4%\r", "\n"}, []string{"2%", "4%"}},
		{"progress shown then a new line", []string{"1%\r", "+", "2%\r", "after\n"}, []string{"2%", "after"}},
		{"long line cut", []string{long, "yz", "\nnext\n"}, []string{long + " [pipectl: 2 more bytes of this line dropped]", "next"}},
		{"long progress cut", []string{long + "abc\r", "\n"}, []string{long + " [pipectl: 3 more bytes of this line dropped]"}},
		{"long line at flush", []string{long + "a"}, []string{long + " [pipectl: 1 more bytes of this line dropped]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var log bytes.Buffer
			now := time.Unix(1, 0)
			w := NewLineWriter(&mu, "", nil, &log)
			w.now = func() time.Time { return now }
			for _, c := range tc.chunks {
				if c == "+" {
					now = now.Add(ProgressInterval)
					continue
				}
				w.Write([]byte(c))
			}
			w.Flush()
			got := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTailCutsLines: a failure summary quotes at most TailLineMax bytes of a
// line, cut on a character boundary.
func TestTailCutsLines(t *testing.T) {
	tail := NewTail(1)
	tail.add(strings.Repeat("a", TailLineMax-1) + "é" + strings.Repeat("b", 100))
	want := strings.Repeat("a", TailLineMax-1) + " [… 102 more bytes]"
	if diff := cmp.Diff([]string{want}, tail.Lines()); diff != "" {
		t.Errorf("tail (-want +got):\n%s", diff)
	}
}
