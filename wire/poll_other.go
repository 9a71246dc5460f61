//go:build !linux

package wire

import "net"

// startShared: shared readers are Linux only; the connection keeps
// its goroutine reader.
func (c *Conn) startShared(net.Conn) (bool, error) { return false, nil }
