//go:build !linux

package process

import "errors"

// ExitOrder would record the order in which processes exit; only Linux
// (pidfds in an epoll set) can tell it. Elsewhere NewExitOrder fails and
// callers order exits by their timestamps.
type ExitOrder struct{}

// NewExitOrder fails with errors.ErrUnsupported outside Linux.
func NewExitOrder() (*ExitOrder, error) { return nil, errors.ErrUnsupported }

func (o *ExitOrder) watch(int) error { return errors.ErrUnsupported }

// Position never knows a position outside Linux.
func (o *ExitOrder) Position(int) (int, bool) { return 0, false }

// Close does nothing outside Linux.
func (o *ExitOrder) Close() {}
