//go:build !linux

package wire

// Unread returns -1: the receive queue is only read on Linux.
func (c *Conn) Unread() int { return -1 }
