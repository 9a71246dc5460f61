package rawws

import (
	"encoding/binary"
	"net"
	"strings"
	"testing"
)

// Every length class, at its edges, has the header RFC 6455 (5.2) asks of
// a client: FIN and the text opcode, the mask bit, and the length in the
// fewest bytes (7 bits, then 16, then 64). wire's tests send frames of
// every class through it to a real WebSocket server.
func TestAppendTextHeader(t *testing.T) {
	for _, n := range []int{0, 125, 126, 0xffff, 0x10000, 1 << 40} {
		h := AppendTextHeader([]byte("x"), n)[1:]
		length, size := int(h[1]&0x7f), 2
		switch length {
		case 126:
			length, size = int(binary.BigEndian.Uint16(h[2:])), 4
		case 127:
			length, size = int(binary.BigEndian.Uint64(h[2:])), 10
		}
		minimal := size == 2 && n < 126 || size == 4 && n >= 126 && n <= 0xffff || size == 10 && n > 0xffff
		if h[0] != 0x81 || h[1]&0x80 == 0 || length != n || size != len(h) || !minimal {
			t.Errorf("n=%d: header % x", n, h)
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
