package sink

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// rawConn does the handshake by hand so tests can send any frame.
func rawConn(t *testing.T) (net.Conn, *bufio.Reader) {
	t.Helper()
	s := New(Options{})
	srv := httptest.NewServer(s)
	t.Cleanup(func() { s.Close(); srv.Close() })
	c, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 101 || resp.Header.Get("Sec-WebSocket-Accept") != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Fatalf("handshake: %d %v", resp.StatusCode, resp.Header)
	}
	return c, br
}

func frame(fin bool, op byte, masked bool, p string) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	b := []byte{b0}
	m := byte(0)
	if masked {
		m = 0x80
	}
	switch {
	case len(p) < 126:
		b = append(b, m|byte(len(p)))
	case len(p) <= 0xffff:
		b = append(b, m|126, byte(len(p)>>8), byte(len(p)))
	default:
		b = append(b, m|127)
		b = binary.BigEndian.AppendUint64(b, uint64(len(p)))
	}
	payload := []byte(p)
	if masked {
		key := [4]byte{0x12, 0x34, 0x56, 0x78}
		b = append(b, key[:]...)
		unmask(payload, key, 0) // XOR is its own inverse
	}
	return append(b, payload...)
}

func readFrame(t *testing.T, br *bufio.Reader) (byte, string) {
	t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		t.Fatal(err)
	}
	n := int(h[1] & 0x7f)
	if n == 126 {
		var l [2]byte
		io.ReadFull(br, l[:])
		n = int(binary.BigEndian.Uint16(l[:]))
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(br, p); err != nil {
		t.Fatal(err)
	}
	if h[1]&0x80 != 0 {
		t.Fatal("server frame is masked")
	}
	return h[0] & 0x0f, string(p)
}

const id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestPipelinedFragmentedAndPing(t *testing.T) {
	c, br := rawConn(t)
	ev := `["EVENT",{"id":"` + id + `","content":"` + strings.Repeat("a", 300) + `"}]`
	var out []byte
	out = append(out, frame(true, opText, true, ev)...)
	out = append(out, frame(false, opText, true, ev[:10])...)
	out = append(out, frame(true, opPing, true, "hi")...) // control frame inside a fragmented message
	out = append(out, frame(false, opContinuation, true, ev[10:200])...)
	out = append(out, frame(true, opContinuation, true, ev[200:])...)
	out = append(out, frame(true, opText, true, `["REQ","s"]`)...)
	if _, err := c.Write(out); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		op byte
		p  string
	}{{opText, `["OK","` + id + `",true,""]`}, {opPong, "hi"}, {opText, `["OK","` + id + `",true,""]`}, {opText, `["EOSE","s"]`}}
	for _, w := range want {
		if op, p := readFrame(t, br); op != w.op || p != w.p {
			t.Fatalf("got op %d %q, want op %d %q", op, p, w.op, w.p)
		}
	}
	// Close handshake: the sink answers with a close frame and hangs up.
	c.Write(frame(true, opClose, true, "\x03\xe8"))
	if op, p := readFrame(t, br); op != opClose || p != "\x03\xe8" {
		t.Fatalf("close reply op %d %q", op, p)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after close: %v", err)
	}
}

func TestProtocolErrors(t *testing.T) {
	for name, f := range map[string][]byte{
		"unmasked":             frame(true, opText, false, `["REQ","s"]`),
		"continuation first":   frame(true, opContinuation, true, `x`),
		"reserved bits":        append([]byte{0xc1}, frame(true, opText, true, "x")[1:]...),
		"unknown opcode":       frame(true, 0x3, true, "x"),
		"fragmented control":   frame(false, opPing, true, "x"),
		"text inside fragment": append(frame(false, opText, true, "a"), frame(true, opText, true, "b")...),
	} {
		c, br := rawConn(t)
		c.Write(f)
		op, p := readFrame(t, br)
		if op != opClose || len(p) < 2 || binary.BigEndian.Uint16([]byte(p)) != closeProtocol {
			t.Errorf("%s: got op %d %q, want close 1002", name, op, p)
		}
	}
}

func FuzzFindID(f *testing.F) {
	f.Add([]byte(`,{"id":"` + id + `"}]`))
	f.Add([]byte(`,{"content":"\"id\":\"x","id" :  "` + id + `"}]`))
	f.Add([]byte(`"id"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := findID(b)
		if !ok {
			return
		}
		if len(got) != 64 || !strings.Contains(string(b), string(got)) {
			t.Fatalf("findID(%q) = %q", b, got)
		}
		for _, c := range got {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				t.Fatalf("findID(%q) = %q: not lower-case hex", b, got)
			}
		}
	})
}
