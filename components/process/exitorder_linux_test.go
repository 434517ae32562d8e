package process

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestExitOrder: the second process exits after the first (it reads a FIFO
// the first holds open until it exits, as a DDP peer reads a socket, then
// takes 50 ms to give up); their positions say so although both are waited
// for late. (The kernel closes a process's files a moment before it reports
// the exit, so a peer that exited within microseconds could come first.)
func TestExitOrder(t *testing.T) {
	for i := 0; i < 20; i++ {
		dir := t.TempDir()
		fifo := filepath.Join(dir, "p")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		o, err := NewExitOrder()
		if err != nil {
			t.Fatal(err)
		}
		first, err := Start(Process{Argv: []string{"sh", "-c", `exec 3>"$0"; exit 3`, fifo}, Env: os.Environ(), Order: o})
		if err != nil {
			t.Fatal(err)
		}
		second, err := Start(Process{Argv: []string{"sh", "-c", `cat "$0"; sleep 0.05; exit 1`, fifo}, Env: os.Environ(), Order: o})
		if err != nil {
			t.Fatal(err)
		}
		<-second.Done()
		<-first.Done()
		p1, ok1 := o.Position(first.Pid())
		p2, ok2 := o.Position(second.Pid())
		o.Close()
		if !ok1 || !ok2 || p1 != 1 || p2 != 2 {
			t.Fatalf("try %d: positions %d (%v) and %d (%v), want 1 and 2", i, p1, ok1, p2, ok2)
		}
	}
}
