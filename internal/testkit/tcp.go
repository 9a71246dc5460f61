package testkit

import (
	"net"
	"sync"
	"testing"
)

// ServeTCP accepts TCP connections on a free port of 127.0.0.1 and runs
// handle on each, in its own goroutine, closing the connection after it;
// it returns the address (host:port), for a peer that answers below HTTP
// or WebSocket. When the test ends the listener and every connection
// still open close, and ServeTCP waits for the handlers to return.
func ServeTCP(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		open   = map[net.Conn]struct{}{}
		closed bool
		wg     sync.WaitGroup
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if closed {
				c.Close()
			}
			open[c] = struct{}{}
			mu.Unlock()
			wg.Go(func() {
				defer func() { mu.Lock(); delete(open, c); mu.Unlock(); c.Close() }()
				handle(c)
			})
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		closed = true
		for c := range open {
			c.Close()
		}
		mu.Unlock()
		<-done
		wg.Wait()
	})
	return ln.Addr().String()
}
