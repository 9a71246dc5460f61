package wire

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// openFDs counts the process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// streamOnREQ is a test relay that answers each REQ by running stream, in
// its own goroutine, with the subscription id as sent (quoted JSON).
func streamOnREQ(t *testing.T, stream func(tc *tconn, sub string)) *testRelay {
	return newTestRelay(t, nil, func(tc *tconn, msg []byte) {
		if arr := decode(t, msg); label(arr) == "REQ" {
			go stream(tc, string(arr[1]))
		}
	})
}

// subscribeAll dials n connections to url on shared readers, opens
// subscription sub on each (connection k's events go to onEvent(k, raw)),
// and waits for every EOSE (a hang guard: what names the wait).
func subscribeAll(t *testing.T, url, sub string, n int, onEvent func(k int, raw []byte), what string) []*Conn {
	t.Helper()
	var cs []*Conn
	var wg sync.WaitGroup
	for k := range n {
		c := dialT(t, url, Options{SharedReader: true})
		cs = append(cs, c)
		wg.Add(1)
		if _, err := c.Req(sub, nil, SubHandler{OnEvent: func(raw []byte, _ int64) { onEvent(k, raw) },
			OnEOSE: func(int64) { wg.Done() }}); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	within(t, done, what)
	return cs
}

// Shared connections (read on the shared readers, out of Go's
// netpoller) deliver every event of every subscription in order, whether
// the events come one per read or many per read, big or fragmented; a ping
// is answered; closing by either side ends the connection once and gives
// the descriptor back.
func TestSharedReaderDeliversAndReleases(t *testing.T) {
	const conns, events = 20, 300
	big := strings.Repeat("é", 40<<10) // an 80 KiB event: more than one read
	r := streamOnREQ(t, func(tc *tconn, sub string) {
		for i := range events {
			content := "x"
			if i%50 == 7 {
				content = big
			}
			_, ev := fakeEvent(i, content)
			if tc.send(`["EVENT",`+sub+`,`+string(ev)+`]`) != nil {
				return
			}
			if i == events/2 {
				// a ping mid-stream: answered by the writer while reading goes on
				_ = tc.ws.Ping(context.Background())
			}
		}
		_ = tc.send(`["EOSE",` + sub + `]`)
	})
	if _, err := sharedPoller(); err != nil { // its epoll descriptors stay
		t.Fatal(err)
	}
	readerState(t, "[IO wait") // and the duplicate in the netpoller
	before := openFDs(t)
	seq := make([]seqCheck, conns)
	cs := subscribeAll(t, r.url, "s", conns, func(k int, raw []byte) { seq[k].event(raw) }, "every EOSE")
	for k, c := range cs {
		if _, ok := c.nc.(*rawSock); !ok {
			t.Fatalf("connection %d is not on a shared reader", k)
		}
		seq[k].check(t, fmt.Sprintf("connection %d", k), events)
	}
	// half closed by us, then the rest by the relay
	for k, c := range cs {
		if k%2 == 0 {
			c.Close()
			within(t, c.Done(), "Done")
		}
	}
	r.mu.Lock()
	for _, tc := range r.conn {
		tc.ws.CloseNow()
	}
	r.mu.Unlock()
	for _, c := range cs {
		within(t, c.Done(), "Done")
	}
	for k, c := range cs {
		if err := c.Err(); (k%2 == 0) != (err == ErrClosed) {
			t.Errorf("connection %d: Err %v", k, err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for openFDs(t) > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := openFDs(t); n > before {
		t.Fatalf("%d descriptors open after every connection ended, %d before", n, before)
	}
}

// A connection closed while its reader is delivering a stream and
// its writer is writing stops cleanly (run with -race).
func TestSharedReaderCloseWhileBusy(t *testing.T) {
	r := streamOnREQ(t, func(tc *tconn, sub string) {
		for i := 0; ; i++ {
			_, ev := fakeEvent(i, "busy")
			if tc.send(`["EVENT",`+sub+`,`+string(ev)+`]`) != nil {
				return
			}
		}
	})
	for range 10 {
		c := dialT(t, r.url, Options{SharedReader: true})
		first := make(chan struct{})
		var once sync.Once
		if _, err := c.Req("s", nil, SubHandler{OnEvent: func([]byte, int64) { once.Do(func() { close(first) }) }}); err != nil {
			t.Fatal(err)
		}
		within(t, first, "first event")
		go func() {
			for i := 0; i < 50; i++ {
				id, raw := fakeEvent(i, "w")
				if c.SendEvent(id, raw, func(OK) {}) != nil {
					return
				}
			}
		}()
		c.Close()
		within(t, c.Done(), "Done")
		if err := c.Err(); err != ErrClosed {
			t.Fatalf("Err after Close: %v", err)
		}
	}
}

// An idle shared reader waits in Go's netpoller ("IO wait"), not in a
// blocking epoll_wait on a thread of its own: a goroutine in a system call
// keeps Go's sysmon waking every 20 µs (a futex call and nanosleeps per OK
// in a publish wait-for-OK run).
func TestSharedReaderWaitsInNetpoller(t *testing.T) {
	if _, err := sharedPoller(); err != nil {
		t.Fatal(err)
	}
	readerState(t, "[IO wait")
}

// readerState waits (a hang guard of 10 s) until a shared reader's
// goroutine is in state (its goroutine header, e.g. "[IO wait").
func readerState(t *testing.T, state string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	var last string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		last = ""
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "wire.(*poller).loop") {
				last, _, _ = strings.Cut(g, "\n")
				if strings.Contains(last, state) {
					return
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no shared reader in %s]; last seen: %q", state, last)
}

// A reader whose set holds more than netpollMax connections waits in a
// blocking epoll_wait, every message still delivered, and goes back to
// the netpoller once they are gone.
func TestSharedReaderCrowded(t *testing.T) {
	old := netpollMax.Swap(1)
	t.Cleanup(func() { netpollMax.Store(old) })
	if _, err := sharedPoller(); err != nil {
		t.Fatal(err)
	}
	const events = 50
	r := streamOnREQ(t, func(tc *tconn, sub string) {
		for i := range events {
			_, ev := fakeEvent(i, "x")
			if tc.send(`["EVENT",`+sub+`,`+string(ev)+`]`) != nil {
				return
			}
		}
		_ = tc.send(`["EOSE",` + sub + `]`)
	})
	var got atomic.Int64
	cs := subscribeAll(t, r.url, "s", 3*len(pollers), func(int, []byte) { got.Add(1) }, "every EOSE") // 3 a reader: crowded
	if n, want := got.Load(), int64(events*len(cs)); n != want {
		t.Fatalf("%d events delivered, want %d", n, want)
	}
	readerState(t, "[syscall")
	for _, c := range cs {
		c.Close()
		within(t, c.Done(), "Done")
	}
	readerState(t, "[IO wait")
}

// Reader names the shared reader a connection is read by (one of
// readerThreads, and the one whose set holds it) and -1 for a
// connection with a reader of its own.
func TestConnReader(t *testing.T) {
	r := streamOnREQ(t, func(*tconn, string) {})
	own := dialT(t, r.url, Options{})
	if got := own.Reader(); got != -1 {
		t.Fatalf("a connection with its own reader: Reader %d, want -1", got)
	}
	for range 2 * readerThreads() {
		c := dialT(t, r.url, Options{SharedReader: true})
		k := c.Reader()
		if k < 0 || k >= len(pollers) {
			t.Fatalf("Reader %d of %d readers", k, len(pollers))
		}
		rs := c.nc.(*rawSock)
		pollers[k].mu.Lock()
		held := int(rs.tok) < len(pollers[k].conns) && pollers[k].conns[rs.tok] == c
		pollers[k].mu.Unlock()
		if !held {
			t.Fatalf("Reader %d: that reader does not hold the connection", k)
		}
	}
}
