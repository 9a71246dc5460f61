package wire

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/nostr"
)

// rawRelay accepts one WebSocket client on 127.0.0.1 and hands the caller
// the raw socket right after the handshake; first is written in the same
// write as the 101 response.
func rawRelay(t *testing.T, first []byte, serve func(net.Conn, *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		br := bufio.NewReader(nc)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		h := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
			base64.StdEncoding.EncodeToString(h[:]) + "\r\n\r\n"
		if _, err := nc.Write(append([]byte(resp), first...)); err != nil {
			return
		}
		serve(nc, br)
	}()
	return "ws://" + ln.Addr().String()
}

// srvFrame is one unmasked server frame.
func srvFrame(b0 byte, payload []byte) []byte {
	var b []byte
	switch n := len(payload); {
	case n < 126:
		b = append(b, b0, byte(n))
	case n <= 0xffff:
		b = append(b, b0, 126, byte(n>>8), byte(n))
	default:
		b = append(b, b0, 127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	return append(b, payload...)
}

// readClientFrame reads one masked client frame: opcode and payload.
func readClientFrame(br *bufio.Reader) (byte, []byte, error) {
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return 0, nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var x [2]byte
		io.ReadFull(br, x[:])
		n = uint64(binary.BigEndian.Uint16(x[:]))
	case 127:
		var x [8]byte
		io.ReadFull(br, x[:])
		n = binary.BigEndian.Uint64(x[:])
	}
	var key [4]byte
	io.ReadFull(br, key[:])
	p := make([]byte, n)
	if _, err := io.ReadFull(br, p); err != nil {
		return 0, nil, err
	}
	for i := range p {
		p[i] ^= key[i%4]
	}
	return h[0] & 0x0f, p, nil
}

// Frames sent in the same packet as the 101, fragmented messages, pings,
// and a message split across many small writes all arrive intact.
func TestFrameReaderDirect(t *testing.T) {
	o := Options{}
	_, ev := fakeEvent(1, strings.Repeat("x", 3000))
	eose := []byte(`["EOSE","s"]`)
	pongs := make(chan []byte, 1)
	url := rawRelay(t, srvFrame(0x81, []byte(`["AUTH","challenge-1"]`)), func(nc net.Conn, br *bufio.Reader) {
		if op, p, err := readClientFrame(br); err != nil || op != 1 || !strings.HasPrefix(string(p), `["REQ","s"`) {
			t.Errorf("REQ: %d %q %v", op, p, err)
			return
		}
		msg := append(append([]byte(`["EVENT","s",`), ev...), ']')
		var out []byte
		out = append(out, srvFrame(0x01, msg[:10])...)                // text, not final
		out = append(out, srvFrame(0x89, []byte("are you there"))...) // ping between fragments
		out = append(out, srvFrame(0x00, msg[10:2000])...)            // continuation
		out = append(out, srvFrame(0x80, msg[2000:])...)              // final continuation
		for i := 0; i < len(out); i += 7 {                            // dribbled out
			nc.Write(out[i:min(i+7, len(out))])
		}
		nc.Write(srvFrame(0x81, eose))
		if op, p, err := readClientFrame(br); err == nil && op == 0xa {
			pongs <- p
		}
		nc.Write(srvFrame(0x88, append([]byte{0x03, 0xe8}, "bye now"...)))
		io.Copy(io.Discard, br)
	})
	c := dialT(t, url, o)
	got := make(chan []byte, 2)
	eosed := make(chan struct{})
	if _, err := c.Req("s", []nostr.Filter{{}}, SubHandler{
		OnEvent: func(raw []byte, _ int64) { got <- append([]byte(nil), raw...) },
		OnEOSE:  func(int64) { close(eosed) },
	}); err != nil {
		t.Fatal(err)
	}
	if raw := within(t, got, "event"); string(raw) != string(ev) {
		t.Fatalf("event reassembled wrong: %d bytes, want %d", len(raw), len(ev))
	}
	within(t, eosed, "EOSE")
	if p := within(t, pongs, "pong"); string(p) != "are you there" {
		t.Errorf("pong payload %q", p)
	}
	within(t, c.Done(), "close")
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "status 1000: bye now") {
		t.Errorf("Err() = %v", err)
	}
	if c.AuthChallenge() != "challenge-1" {
		t.Errorf("AUTH sent with the 101 lost: challenge %q", c.AuthChallenge())
	}
	if s := c.Stats(); s.Malformed != 0 || s.Events != 1 || s.EOSEs != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestFrameReaderLimitsAndMasks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frame []byte
		want  error
		text  string
	}{
		{"too big", srvFrame(0x81, make([]byte, 5000)), ErrMessageTooBig, ""},
		{"masked", []byte{0x81, 0x82, 1, 2, 3, 4, 'a', 'b'}, nil, "masked frame"},
		{"eof", nil, nil, "without a close frame"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := rawRelay(t, nil, func(nc net.Conn, br *bufio.Reader) {
				nc.Write(tc.frame)
				if tc.frame != nil {
					io.Copy(io.Discard, br)
				}
			})
			c := dialT(t, url, Options{ReadLimit: 4096})
			within(t, c.Done(), "failure")
			err := c.Err()
			if tc.want != nil && !errors.Is(err, tc.want) || tc.text != "" && (err == nil || !strings.Contains(err.Error(), tc.text)) {
				t.Errorf("Err() = %v", err)
			}
		})
	}
}
