package process

import (
	"errors"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// ExitOrder records the order in which processes exit, as the kernel saw
// it: each process's pidfd sits in one epoll set, whose ready list keeps the
// order of the exits. (Timestamps taken by the goroutines that wait for the
// processes would depend on which one the scheduler runs first: on a busy
// machine a peer that failed because another rank died can look first.)
type ExitOrder struct {
	epfd int

	mu     sync.Mutex
	exited *sync.Cond
	fds    map[int32]int // pidfd → pid
	seq    map[int]int   // pid → position in the exit order, from 1
	next   int
	closed bool
}

// NewExitOrder starts recording. Close it when done.
func NewExitOrder() (*ExitOrder, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	o := &ExitOrder{epfd: epfd, fds: map[int32]int{}, seq: map[int]int{}}
	o.exited = sync.NewCond(&o.mu)
	go o.loop()
	return o, nil
}

// watch adds the process pid, which must not have been reaped yet.
func (o *ExitOrder) watch(pid int) error {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return err
	}
	o.mu.Lock()
	o.fds[int32(fd)] = pid
	o.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
	if err := unix.EpollCtl(o.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		o.mu.Lock()
		delete(o.fds, int32(fd))
		o.mu.Unlock()
		unix.Close(fd)
		return err
	}
	return nil
}

func (o *ExitOrder) loop() {
	events := make([]unix.EpollEvent, 32)
	for {
		n, err := unix.EpollWait(o.epfd, events, 100)
		o.mu.Lock()
		if o.closed {
			for fd := range o.fds {
				unix.Close(int(fd))
			}
			unix.Close(o.epfd)
			o.mu.Unlock()
			return
		}
		if err != nil && !errors.Is(err, unix.EINTR) {
			o.closed = true
			o.exited.Broadcast()
			o.mu.Unlock()
			continue
		}
		for _, ev := range events[:max(n, 0)] {
			pid, ok := o.fds[ev.Fd]
			if !ok {
				continue
			}
			o.next++
			o.seq[pid] = o.next
			delete(o.fds, ev.Fd)
			_ = unix.EpollCtl(o.epfd, unix.EPOLL_CTL_DEL, int(ev.Fd), nil)
			unix.Close(int(ev.Fd))
		}
		// Every round, so that Position's waits see their deadline too.
		o.exited.Broadcast()
		o.mu.Unlock()
	}
}

// Position returns where pid came in the exit order (1 is first), waiting up
// to a second for a process that has exited to be recorded. ok is false for
// a process it did not watch.
func (o *ExitOrder) Position(pid int) (pos int, ok bool) {
	deadline := time.Now().Add(time.Second)
	o.mu.Lock()
	defer o.mu.Unlock()
	for {
		if p, ok := o.seq[pid]; ok {
			return p, true
		}
		watched := false
		for _, p := range o.fds {
			watched = watched || p == pid
		}
		if !watched || o.closed || time.Now().After(deadline) {
			return 0, false
		}
		// The loop ends a round at least every 100 ms.
		o.exited.Wait()
	}
}

// Close stops recording.
func (o *ExitOrder) Close() {
	o.mu.Lock()
	o.closed = true
	o.exited.Broadcast()
	o.mu.Unlock()
}
