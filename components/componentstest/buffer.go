// Package componentstest has helpers for the tests of code that runs
// components and collects their output, and for the fuzz targets of the
// loaders of pipeline and component files.
package componentstest

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that many goroutines may write to and read, as
// the log sinks of parallel steps, ranks and test servers are.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
