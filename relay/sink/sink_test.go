package sink_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/relay/sink"
	"github.com/relaybench/relaybench/wire"
)

// recListener records accepted TCP conns so tests can inspect the sockets.
type recListener struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (l *recListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

func start(t *testing.T, o sink.Options) (*sink.Server, string, *recListener) {
	t.Helper()
	s := sink.New(o)
	srv := httptest.NewUnstartedServer(s)
	rl := &recListener{Listener: srv.Listener}
	srv.Listener = rl
	srv.Start()
	t.Cleanup(func() { s.Close(); srv.Close() })
	return s, "ws" + strings.TrimPrefix(srv.URL, "http"), rl
}

func dial(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(1 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	return ws
}

func roundTrip(t *testing.T, ws *websocket.Conn, msg string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	_, got, err := ws.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

const id1 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestAnswers(t *testing.T) {
	s, url, _ := start(t, sink.Options{})
	ws := dial(t, url)
	cases := []struct{ in, want string }{
		{`["EVENT",{"id":"` + id1 + `","kind":1}]`, `["OK","` + id1 + `",true,""]`},
		// id last, after a content and a key that contain "id" in other forms.
		{`["EVENT",{"content":"\"id\":\"` + strings.Repeat("f", 64) + `\"","x\"id":"y","tags":[["id","z"]],"id" : "` + id1 + `"}]`,
			`["OK","` + id1 + `",true,""]`},
		{` [ "EVENT" , {"id":"` + id1 + `"} ] `, `["OK","` + id1 + `",true,""]`},
		{`["REQ","sub \"1\"",{"kinds":[1]}]`, `["EOSE","sub \"1\""]`},
		{`["COUNT","c",{}]`, `["COUNT","c",{"count":0}]`},
		{`["EVENT",{"id":"XYZ"}]`, `["NOTICE","invalid: EVENT message without a 64-hex id"]`},
		{`garbage`, `["NOTICE","invalid: message is not a JSON array"]`},
		{`["WHAT"]`, `["NOTICE","invalid: unknown message type"]`},
	}
	for _, tc := range cases {
		if got := roundTrip(t, ws, tc.in); got != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
	// CLOSE gets no answer: the next reply is for the following message.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws.Write(ctx, websocket.MessageText, []byte(`["CLOSE","sub"]`))
	if got := roundTrip(t, ws, `["REQ","after",{}]`); got != `["EOSE","after"]` {
		t.Fatalf("after CLOSE got %s", got)
	}
	st := s.Stats()
	if st.Events != 3 || st.Reqs != 3 || st.Conns != 1 || st.Open != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestFragmentedPingAndBigMessages(t *testing.T) {
	_, url, _ := start(t, sink.Options{MaxMessageLength: 200 << 10})
	ws := dial(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// A 100 KiB event written as several frames (coder/websocket's Writer
	// sends each Write as a frame).
	w, err := ws.Writer(ctx, websocket.MessageText)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(`["EVENT",{"content":"` + strings.Repeat("x", 50<<10)))
	w.Write([]byte(strings.Repeat("y", 50<<10) + `","id":"` + id1 + `"}]`))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, got, err := ws.Read(ctx); err != nil || string(got) != `["OK","`+id1+`",true,""]` {
		t.Fatalf("fragmented: %s %v", got, err)
	}
	// Ping needs a concurrent reader to receive the pong.
	rctx := ws.CloseRead(ctx)
	_ = rctx
	if err := ws.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}

	// Over the limit: the sink closes with 1009.
	ws2 := dial(t, url)
	ws2.Write(ctx, websocket.MessageText, []byte(`["EVENT",{"content":"`+strings.Repeat("z", 300<<10)+`"}]`))
	_, _, err = ws2.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Fatalf("oversized message: %v", err)
	}
}

func TestNIP11(t *testing.T) {
	_, url, _ := start(t, sink.Options{})
	resp, err := nip11.Get(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info struct {
		Name, Software, Version string
		Limitation              struct {
			MaxMessageLength int `json:"max_message_length"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Content-Type") != "application/nostr+json" || info.Name != "relaybench-sink" ||
		info.Software != "relaybench-sink" || info.Version == "" || info.Limitation.MaxMessageLength != sink.DefaultMaxMessageLength {
		t.Fatalf("NIP-11: %s %+v", resp.Header.Get("Content-Type"), info)
	}
}

// The sink with the real client: pipelined events all answered, and the
// server-side socket has TCP_NODELAY.
func TestWithWireClient(t *testing.T) {
	s, url, rl := start(t, sink.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := wire.Dial(ctx, url, wire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 2000
	var wg sync.WaitGroup
	wg.Add(n)
	var mu sync.Mutex
	bad := 0
	for i := range n {
		id := fmt.Sprintf("%064x", i)
		raw := []byte(`{"id":"` + id + `","kind":1,"content":"` + strings.Repeat("c", 900) + `"}`)
		if err := c.SendEvent(id, raw, func(ok wire.OK) {
			if ok.Err != nil || !ok.Accepted || ok.ID != id {
				mu.Lock()
				bad++
				mu.Unlock()
			}
			wg.Done()
		}); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("not all OKs arrived")
	}
	if bad != 0 || c.Stats().UnmatchedOK != 0 || s.Stats().Events != n {
		t.Fatalf("bad=%d client %+v sink %+v", bad, c.Stats(), s.Stats())
	}
	rl.mu.Lock()
	conns := append([]net.Conn(nil), rl.conns...)
	rl.mu.Unlock()
	if len(conns) != 1 {
		t.Fatalf("%d conns accepted", len(conns))
	}
	rc, err := conns[0].(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	v := -1
	rc.Control(func(fd uintptr) { v, _ = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_NODELAY) })
	if v == 0 || v == -1 {
		t.Fatalf("server TCP_NODELAY = %d", v)
	}

	// Close ends open connections.
	s.Close()
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Server.Close did not end the connection")
	}
	if err := c.Err(); err == nil || errors.Is(err, wire.ErrClosed) {
		t.Fatalf("conn err after server close: %v", err)
	}
}
