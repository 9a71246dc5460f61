package rawws

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func TestAppendTextHeader(t *testing.T) {
	for _, c := range []struct {
		n    int
		want []byte
	}{
		{0, []byte{0x81, 0x80}},
		{125, []byte{0x81, 0x80 | 125}},
		{126, []byte{0x81, 0x80 | 126, 0, 126}},
		{0xffff, []byte{0x81, 0x80 | 126, 0xff, 0xff}},
		{0x10000, []byte{0x81, 0x80 | 127, 0, 0, 0, 0, 0, 1, 0, 0}},
	} {
		if got := AppendTextHeader([]byte("x"), c.n); !bytes.Equal(got, append([]byte("x"), c.want...)) {
			t.Errorf("n=%d: % x, want x % x", c.n, got, c.want)
		}
	}
}

// A frame of every length class written after Upgrade (zero mask key)
// reaches a real WebSocket server whole.
func TestUpgradeThenFrames(t *testing.T) {
	got := make(chan string, 3)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ws.SetReadLimit(1 << 20)
		for {
			_, msg, err := ws.Read(r.Context())
			if err != nil {
				return
			}
			got <- string(msg)
		}
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := Upgrade(c, host); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{5, 300, 70000} {
		msg := strings.Repeat("m", n)
		frame := append(AppendTextHeader(nil, n), 0, 0, 0, 0)
		if _, err := c.Write(append(frame, msg...)); err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-got:
			if m != msg {
				t.Fatalf("n=%d: the server read %d bytes", n, len(m))
			}
		case <-time.After(time.Minute): // a hang guard only
			t.Fatalf("n=%d: nothing read", n)
		}
	}
}

func TestUpgradeRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := Upgrade(c, host); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Fatalf("got %v, want the 404 named", err)
	}
}
