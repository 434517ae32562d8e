package mpiagent

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// The agent's frames to the client: a kind byte, a big-endian length and
// that many bytes.
const (
	frameStdout byte = 1
	frameStderr byte = 2
	// frameExit carries the command's exit status (4 bytes, big-endian).
	frameExit byte = 3
)

// maxFrame bounds a frame's payload (and the request line).
const maxFrame = 1 << 20

// request is the client's one line of JSON: the command line OpenMPI
// passes its rsh agent after the host, joined with spaces as ssh joins it,
// which the agent runs with /bin/sh -c.
type request struct {
	Command string `json:"command"`
}

// frameWriter writes frames to w, one at a time.
type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (f *frameWriter) write(kind byte, p []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var h [5]byte
	h[0] = kind
	binary.BigEndian.PutUint32(h[1:], uint32(len(p)))
	if _, err := f.w.Write(h[:]); err != nil {
		return err
	}
	_, err := f.w.Write(p)
	return err
}

// stream is an io.Writer of one kind of frame, in pieces of at most
// maxFrame bytes.
type stream struct {
	f    *frameWriter
	kind byte
}

func (s stream) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		c := p[:min(len(p), maxFrame)]
		if err := s.f.write(s.kind, c); err != nil {
			return n, err
		}
		n, p = n+len(c), p[len(c):]
	}
	return n, nil
}

// readFrames copies the agent's output frames to stdout and stderr and
// returns the exit status of the exit frame.
func readFrames(r io.Reader, stdout, stderr io.Writer) (int, error) {
	var h [5]byte
	buf := make([]byte, 32<<10)
	for {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return 0, errors.New("the agent closed the connection before the command's exit status")
			}
			return 0, err
		}
		n := binary.BigEndian.Uint32(h[1:])
		if n > maxFrame {
			return 0, fmt.Errorf("the agent sent a frame of %d bytes, over %d", n, maxFrame)
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		p := buf[:n]
		if _, err := io.ReadFull(r, p); err != nil {
			return 0, err
		}
		switch h[0] {
		case frameStdout:
			_, _ = stdout.Write(p)
		case frameStderr:
			_, _ = stderr.Write(p)
		case frameExit:
			if n != 4 {
				return 0, fmt.Errorf("the agent sent an exit frame of %d bytes", n)
			}
			return int(int32(binary.BigEndian.Uint32(p))), nil
		default:
			return 0, fmt.Errorf("the agent sent a frame of unknown kind %d", h[0])
		}
	}
}
