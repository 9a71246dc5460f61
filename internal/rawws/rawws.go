// Package rawws is the client side of WebSocket for code that frames by
// hand: the header of a client text frame (wire's direct writer, the
// floor benchmarks) and the upgrade handshake over a plain connection (the
// floor benchmarks).
package rawws

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
)

// AppendTextHeader appends the header of one final, masked client text
// frame with an n-byte payload, up to the mask key (which the caller
// appends).
func AppendTextHeader(b []byte, n int) []byte {
	switch {
	case n < 126:
		return append(b, 0x81, 0x80|byte(n))
	case n <= 0xffff:
		return append(b, 0x81, 0x80|126, byte(n>>8), byte(n))
	default:
		b = append(b, 0x81, 0x80|127)
		return binary.BigEndian.AppendUint64(b, uint64(n))
	}
}

// Upgrade sends the WebSocket upgrade request for host over c and reads
// the answer, which must be 101 Switching Protocols. The reader holds what
// came after the answer.
func Upgrade(c net.Conn, host string) (*bufio.Reader, error) {
	var key [16]byte
	rand.Read(key[:])
	_, err := fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
		host, base64.StdEncoding.EncodeToString(key[:]))
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(c, 4096)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return nil, fmt.Errorf("upgrade: HTTP %d", resp.StatusCode)
	}
	return br, nil
}
