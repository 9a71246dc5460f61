package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// testRelay is a scriptable NIP-01 server on 127.0.0.1 for the tests.
type testRelay struct {
	srv  *httptest.Server
	url  string
	mu   sync.Mutex
	got  []string // every text message received, in order
	conn []*tconn
}

type tconn struct {
	ws *websocket.Conn
	mu sync.Mutex
}

func (t *tconn) send(s string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return t.ws.Write(ctx, websocket.MessageText, []byte(s))
}

// newTestRelay starts a relay that calls onConnect once per connection and
// onMsg for each message (both may be nil).
func newTestRelay(t *testing.T, onConnect func(*tconn), onMsg func(*tconn, []byte)) *testRelay {
	t.Helper()
	return newRelay(t, false, onConnect, onMsg)
}

// newRelay is newTestRelay, over TLS (wss://) when useTLS.
func newRelay(t *testing.T, useTLS bool, onConnect func(*tconn), onMsg func(*tconn, []byte)) *testRelay {
	t.Helper()
	r := &testRelay{}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ws, err := websocket.Accept(w, req, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return
		}
		ws.SetReadLimit(32 << 20)
		tc := &tconn{ws: ws}
		r.mu.Lock()
		r.conn = append(r.conn, tc)
		r.mu.Unlock()
		defer ws.CloseNow()
		if onConnect != nil {
			onConnect(tc)
		}
		for {
			_, msg, err := ws.Read(context.Background())
			if err != nil {
				return
			}
			r.mu.Lock()
			r.got = append(r.got, string(msg))
			r.mu.Unlock()
			if onMsg != nil {
				onMsg(tc, msg)
			}
		}
	}))
	if useTLS {
		r.srv.StartTLS()
	} else {
		r.srv.Start()
	}
	r.url = "ws" + strings.TrimPrefix(r.srv.URL, "http")
	t.Cleanup(func() {
		r.mu.Lock()
		for _, c := range r.conn {
			c.ws.CloseNow()
		}
		r.mu.Unlock()
		r.srv.Close()
	})
	return r
}

func (r *testRelay) received() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// waitReceived waits (generously) until the relay has received n messages.
func (r *testRelay) waitReceived(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := r.received()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("relay received %d messages, want %d: %q", len(got), n, got)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// decode parses a client message into its elements.
func decode(t *testing.T, msg []byte) []json.RawMessage {
	t.Helper()
	var arr []json.RawMessage
	if err := json.Unmarshal(msg, &arr); err != nil {
		t.Errorf("client sent invalid JSON %q: %v", msg, err)
		return nil
	}
	return arr
}

func label(arr []json.RawMessage) string {
	var s string
	if len(arr) > 0 {
		json.Unmarshal(arr[0], &s)
	}
	return s
}

func eventID(t *testing.T, raw json.RawMessage) string {
	var ev struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Errorf("bad event %s: %v", raw, err)
	}
	return ev.ID
}

// fakeEvent returns a well-formed (unsigned) event object with id n.
func fakeEvent(n int, content string) (id string, raw []byte) {
	id = fmt.Sprintf("%064x", n)
	c, _ := json.Marshal(content)
	raw = []byte(`{"id":"` + id + `","pubkey":"` + strings.Repeat("a", 64) + `","created_at":1700000000,"kind":1,"tags":[],"content":` +
		string(c) + `,"sig":"` + strings.Repeat("b", 128) + `"}`)
	return id, raw
}

func dialT(t *testing.T, url string, o Options) *Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, url, o)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// within fails the test if ch is not closed/readable within a generous deadline.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}
