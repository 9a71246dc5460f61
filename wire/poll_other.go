//go:build !linux

package wire

import "net"

// startShared: shared readers are Linux only; the connection keeps
// its goroutine reader.
func (c *Conn) startShared(net.Conn) (bool, error) { return false, nil }

// Reader: -1, the connection has a reader of its own (see the Linux one).
func (c *Conn) Reader() int { return -1 }
