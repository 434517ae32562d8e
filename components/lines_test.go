package components

import (
	"bytes"
	"sync"
	"testing"

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
