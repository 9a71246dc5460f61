package rawws

import (
	"bytes"
	"net"
	"strings"
	"testing"
)

// The header of each length class (wire's tests send frames of every class
// through it to a real WebSocket server).
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

// upgradeAgainst runs Upgrade against a server that reads the request and
// answers with the response given; it returns the request, what the
// reader holds after the answer, and Upgrade's error.
func upgradeAgainst(t *testing.T, response string) (request, rest string, err error) {
	t.Helper()
	client, server := net.Pipe()
	defer client.Close()
	got := make(chan string, 1)
	go func() {
		defer server.Close()
		b := make([]byte, 4096)
		n, _ := server.Read(b)
		got <- string(b[:n])
		server.Write([]byte(response))
	}()
	br, err := Upgrade(client, "relay.example:7777")
	if err == nil {
		b, _ := br.Peek(br.Buffered())
		rest = string(b)
	}
	return <-got, rest, err
}

func TestUpgrade(t *testing.T) {
	req, rest, err := upgradeAgainst(t, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x02hi")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"GET / HTTP/1.1\r\n", "Host: relay.example:7777\r\n", "Upgrade: websocket\r\n", "Connection: Upgrade\r\n", "Sec-WebSocket-Version: 13\r\n"} {
		if !strings.Contains(req, line) {
			t.Errorf("request %q lacks %q", req, line)
		}
	}
	if !strings.HasSuffix(req, "\r\n\r\n") || !strings.Contains(req, "Sec-WebSocket-Key: ") {
		t.Errorf("request %q", req)
	}
	if rest != "\x81\x02hi" {
		t.Errorf("after the answer the reader holds %q, want the first frame", rest)
	}
}

func TestUpgradeRefused(t *testing.T) {
	if _, _, err := upgradeAgainst(t, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Fatalf("got %v, want the 404 named", err)
	}
}
