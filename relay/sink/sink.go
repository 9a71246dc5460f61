// Package sink is a NIP-01 relay that answers ["OK",id,true,""] to every
// EVENT at once and stores nothing, so a benchmark against it measures the
// client's own ceiling.
//
// It speaks WebSocket (RFC 6455) itself on the hijacked connection instead of
// going through a general library (measured: coder/websocket's server side
// cost 5–7 µs of CPU per pipelined event, this sink 0.8): it reads frames
// from a 64 KiB buffer, finds the event id with a minimal scan (no JSON
// decoding, no signature check) and buffers its replies, flushing only when
// the next whole frame is not already buffered. Under pipelined load many OKs
// leave in one write; a lone event is answered at once.
package sink

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Version is reported in the NIP-11 document.
const Version = "1.0.0"

// Defaults for zero Options fields.
const (
	DefaultMaxMessageLength = 16 << 20
	DefaultWriteTimeout     = 30 * time.Second
	DefaultReadBufferSize   = 64 << 10
	writeBufferSize         = 8 << 10
)

// Options configure a Server. The zero value is usable.
type Options struct {
	// MaxMessageLength is the largest message accepted (default 16 MiB); a
	// larger one closes the connection with status 1009. It is advertised as
	// NIP-11 limitation.max_message_length.
	MaxMessageLength int
	// WriteTimeout closes a connection whose client stops reading (default 30 s).
	WriteTimeout time.Duration
	// ReadBufferSize is the per-connection read buffer (default 64 KiB).
	// Large buffers let one read syscall take many pipelined events (16 KiB
	// doubled the sink's CPU per event in BenchmarkPublishPipelined); lower
	// it for many thousands of mostly idle connections.
	ReadBufferSize int
}

// Stats counts what the server has handled.
type Stats struct {
	Conns     int64 // connections accepted in total
	Open      int64 // connections open now
	Events    int64 // EVENT (and AUTH) messages answered with OK
	Reqs      int64 // REQ (and COUNT) messages answered
	Notices   int64 // NOTICEs sent for invalid messages
	BytesIn   int64 // WebSocket payload bytes received
	FramesOut int64 // messages sent
}

// Server is the sink relay; it is an http.Handler.
type Server struct {
	o    Options
	info []byte

	conns, open, events, reqs, notices, bytesIn, framesOut atomic.Int64

	mu     sync.Mutex
	active map[net.Conn]struct{}
	closed bool
}

// New returns a sink relay.
func New(o Options) *Server {
	if o.MaxMessageLength <= 0 {
		o.MaxMessageLength = DefaultMaxMessageLength
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.ReadBufferSize <= 0 {
		o.ReadBufferSize = DefaultReadBufferSize
	}
	info, _ := json.Marshal(map[string]any{
		"name":           "relaybench-sink",
		"description":    "answers OK true to every EVENT at once and stores nothing",
		"software":       "relaybench-sink",
		"version":        Version,
		"supported_nips": []int{1, 11},
		"limitation": map[string]any{
			"max_message_length": o.MaxMessageLength,
			"auth_required":      false,
			"payment_required":   false,
		},
	})
	return &Server{o: o, info: info, active: make(map[net.Conn]struct{})}
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	return Stats{
		Conns: s.conns.Load(), Open: s.open.Load(), Events: s.events.Load(),
		Reqs: s.reqs.Load(), Notices: s.notices.Load(), BytesIn: s.bytesIn.Load(),
		FramesOut: s.framesOut.Load(),
	}
}

// Close closes every open WebSocket connection and refuses new ones. (The
// http.Server serving it is closed separately.)
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for c := range s.active {
		c.Close()
	}
	s.mu.Unlock()
	return nil
}

// ServeHTTP upgrades WebSocket requests, answers NIP-11 requests and
// describes itself to anything else.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if headerHasToken(r.Header, "Upgrade", "websocket") {
		s.upgrade(w, r)
		return
	}
	if strings.Contains(r.Header.Get("Accept"), "application/nostr+json") {
		h := w.Header()
		h.Set("Content-Type", "application/nostr+json")
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Headers", "*")
		h.Set("Access-Control-Allow-Methods", "GET")
		w.Write(s.info)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, "relaybench-sink: a Nostr relay that accepts every event and stores nothing; connect with a WebSocket client.\n")
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

func (s *Server) upgrade(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Sec-WebSocket-Key")
	switch {
	case r.Method != http.MethodGet:
		http.Error(w, "WebSocket upgrade needs GET", http.StatusMethodNotAllowed)
		return
	case !headerHasToken(r.Header, "Connection", "upgrade"):
		http.Error(w, "WebSocket upgrade needs Connection: Upgrade", http.StatusBadRequest)
		return
	case r.Header.Get("Sec-WebSocket-Version") != "13":
		w.Header().Set("Sec-WebSocket-Version", "13")
		http.Error(w, "unsupported WebSocket version", http.StatusUpgradeRequired)
		return
	case key == "":
		http.Error(w, "missing Sec-WebSocket-Key", http.StatusBadRequest)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "connection cannot be upgraded", http.StatusInternalServerError)
		return
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		conn.Close()
		return
	}
	s.active[conn] = struct{}{}
	s.mu.Unlock()
	s.conns.Add(1)
	s.open.Add(1)
	defer func() {
		s.mu.Lock()
		delete(s.active, conn)
		s.mu.Unlock()
		s.open.Add(-1)
		conn.Close()
	}()
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetNoDelay(true) // Go's default for accepted conns; made explicit
	}
	conn.SetDeadline(time.Time{})

	sum := sha1.Sum([]byte(key + wsGUID))
	resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n"
	if _, err := io.WriteString(conn, resp); err != nil {
		return
	}
	var src io.Reader = conn
	if n := brw.Reader.Buffered(); n > 0 {
		pre, _ := brw.Reader.Peek(n)
		src = io.MultiReader(bytes.NewReader(append([]byte(nil), pre...)), conn)
	}
	c := &wsConn{
		s:  s,
		nc: conn,
		br: bufio.NewReaderSize(src, s.o.ReadBufferSize),
		bw: bufio.NewWriterSize(&deadlineWriter{nc: conn, timeout: s.o.WriteTimeout}, writeBufferSize),
	}
	c.serve()
}

// deadlineWriter refreshes the write deadline lazily (when a quarter of the
// timeout has passed since it was set) to avoid a timer update per write.
type deadlineWriter struct {
	nc      net.Conn
	timeout time.Duration
	set     time.Time
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	now := time.Now()
	if now.Sub(d.set) > d.timeout/4 {
		if err := d.nc.SetWriteDeadline(now.Add(d.timeout)); err != nil {
			return 0, err
		}
		d.set = now
	}
	return d.nc.Write(p)
}

// WebSocket opcodes and close codes used here.
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xa

	closeNormal   = 1000
	closeProtocol = 1002
	closeTooBig   = 1009
)

var errProtocol = errors.New("websocket protocol error")

type wsConn struct {
	s      *Server
	nc     net.Conn
	br     *bufio.Reader
	bw     *bufio.Writer
	msg    []byte // the message being assembled
	inMsg  bool   // a fragmented message is in progress
	msgBin bool
	out    []byte // scratch for building a reply
	hdr    [14]byte
	key    [4]byte
	whdr   [10]byte
	ctl    [125]byte
}

func (c *wsConn) serve() {
	hdr, ctl := c.hdr[:], c.ctl[:] // in the struct: slices of locals passed to io.Reader would escape
	for {
		// Flush replies before any read that could block: when the next
		// whole frame is not already buffered.
		if c.bw.Buffered() > 0 && !c.frameBuffered() {
			if c.bw.Flush() != nil {
				return
			}
		}
		if _, err := io.ReadFull(c.br, hdr[:2]); err != nil {
			return
		}
		fin := hdr[0]&0x80 != 0
		op := hdr[0] & 0x0f
		if hdr[0]&0x70 != 0 || hdr[1]&0x80 == 0 { // reserved bits, or client frame not masked
			c.closeWith(closeProtocol, "protocol error")
			return
		}
		n := uint64(hdr[1] & 0x7f)
		switch n {
		case 126:
			if _, err := io.ReadFull(c.br, hdr[2:4]); err != nil {
				return
			}
			n = uint64(binary.BigEndian.Uint16(hdr[2:4]))
		case 127:
			if _, err := io.ReadFull(c.br, hdr[2:10]); err != nil {
				return
			}
			n = binary.BigEndian.Uint64(hdr[2:10])
		}
		if _, err := io.ReadFull(c.br, c.key[:]); err != nil {
			return
		}
		key := c.key
		if op >= 0x8 { // control frame
			if !fin || n > 125 {
				c.closeWith(closeProtocol, "bad control frame")
				return
			}
			p := ctl[:n]
			if _, err := io.ReadFull(c.br, p); err != nil {
				return
			}
			unmask(p, key, 0)
			switch op {
			case opPing:
				c.writeFrame(opPong, p)
			case opPong:
			case opClose:
				code := closeNormal
				if len(p) >= 2 {
					code = int(binary.BigEndian.Uint16(p))
				}
				c.closeWith(code, "")
				return
			default:
				c.closeWith(closeProtocol, "unknown opcode")
				return
			}
			continue
		}
		switch op {
		case opText, opBinary:
			if c.inMsg {
				c.closeWith(closeProtocol, "new message inside a fragmented one")
				return
			}
			c.inMsg, c.msgBin, c.msg = true, op == opBinary, c.msg[:0]
		case opContinuation:
			if !c.inMsg {
				c.closeWith(closeProtocol, "continuation without a message")
				return
			}
		default:
			c.closeWith(closeProtocol, "unknown opcode")
			return
		}
		if uint64(len(c.msg))+n > uint64(c.s.o.MaxMessageLength) {
			c.closeWith(closeTooBig, "message too big")
			return
		}
		start := len(c.msg)
		c.msg = growTo(c.msg, start+int(n))
		if _, err := io.ReadFull(c.br, c.msg[start:]); err != nil {
			return
		}
		unmask(c.msg[start:], key, 0)
		c.s.bytesIn.Add(int64(n))
		if !fin {
			continue
		}
		c.inMsg = false
		if c.msgBin {
			c.notice("invalid: binary messages are not NIP-01")
		} else {
			c.handle(c.msg)
		}
		if cap(c.msg) > 1<<20 {
			c.msg = nil
		}
	}
}

// frameBuffered reports whether a whole frame is already in the read buffer.
func (c *wsConn) frameBuffered() bool {
	b, _ := c.br.Peek(c.br.Buffered())
	if len(b) < 2 {
		return false
	}
	h, n := 2, uint64(b[1]&0x7f)
	switch n {
	case 126:
		if len(b) < 4 {
			return false
		}
		h, n = 4, uint64(binary.BigEndian.Uint16(b[2:4]))
	case 127:
		if len(b) < 10 {
			return false
		}
		h, n = 10, binary.BigEndian.Uint64(b[2:10])
	}
	if b[1]&0x80 != 0 {
		h += 4
	}
	return len(b) >= h && uint64(len(b)-h) >= n
}

func growTo(b []byte, n int) []byte {
	if n <= cap(b) {
		return b[:n]
	}
	nb := make([]byte, n, max(n, 2*cap(b), 4096))
	copy(nb, b)
	return nb
}

// unmask XORs p with the 4-byte key, 8 bytes at a time.
func unmask(p []byte, key [4]byte, pos int) {
	k := [4]byte{key[pos&3], key[(pos+1)&3], key[(pos+2)&3], key[(pos+3)&3]}
	k32 := binary.LittleEndian.Uint32(k[:])
	k64 := uint64(k32) | uint64(k32)<<32
	i := 0
	for ; i+8 <= len(p); i += 8 {
		binary.LittleEndian.PutUint64(p[i:], binary.LittleEndian.Uint64(p[i:])^k64)
	}
	for ; i < len(p); i++ {
		p[i] ^= k[i&3]
	}
}

// writeFrame buffers one unmasked frame; serve flushes.
func (c *wsConn) writeFrame(op byte, p []byte) error {
	hdr := &c.whdr
	hdr[0] = 0x80 | op
	h := 2
	switch {
	case len(p) < 126:
		hdr[1] = byte(len(p))
	case len(p) <= 0xffff:
		hdr[1] = 126
		binary.BigEndian.PutUint16(hdr[2:], uint16(len(p)))
		h = 4
	default:
		hdr[1] = 127
		binary.BigEndian.PutUint64(hdr[2:], uint64(len(p)))
		h = 10
	}
	c.bw.Write(hdr[:h])
	_, err := c.bw.Write(p)
	c.s.framesOut.Add(1)
	return err
}

func (c *wsConn) closeWith(code int, reason string) {
	p := make([]byte, 2, 2+len(reason))
	binary.BigEndian.PutUint16(p, uint16(code))
	p = append(p, reason...)
	c.writeFrame(opClose, p)
	c.bw.Flush()
}

func (c *wsConn) notice(msg string) {
	c.s.notices.Add(1)
	b := append(c.out[:0], `["NOTICE",`...)
	b = appendJSONString(b, msg)
	b = append(b, ']')
	c.out = b
	c.writeFrame(opText, b)
}

// handle answers one client message.
func (c *wsConn) handle(m []byte) {
	i := skipWS(m, 0)
	if i >= len(m) || m[i] != '[' {
		c.notice("invalid: message is not a JSON array")
		return
	}
	i = skipWS(m, i+1)
	label, i, ok := scanString(m, i)
	if !ok {
		c.notice("invalid: message has no label")
		return
	}
	switch string(label) {
	case "EVENT", "AUTH":
		id, ok := findID(m[i:])
		if !ok {
			c.notice("invalid: " + string(label) + " message without a 64-hex id")
			return
		}
		c.s.events.Add(1)
		b := append(c.out[:0], `["OK","`...)
		b = append(b, id...)
		b = append(b, `",true,""]`...)
		c.out = b
		c.writeFrame(opText, b)
	case "REQ", "COUNT":
		j, ok := comma(m, i)
		if !ok || j >= len(m) || m[j] != '"' {
			c.notice("invalid: " + string(label) + " message without a subscription id")
			return
		}
		sub, _, ok := scanString(m, j)
		if !ok {
			c.notice("invalid: bad subscription id")
			return
		}
		c.s.reqs.Add(1)
		b := append(c.out[:0], `["`...)
		if string(label) == "REQ" {
			b = append(b, `EOSE","`...)
			b = append(b, sub...)
			b = append(b, `"]`...)
		} else {
			b = append(b, `COUNT","`...)
			b = append(b, sub...)
			b = append(b, `",{"count":0}]`...)
		}
		c.out = b
		c.writeFrame(opText, b)
	case "CLOSE":
	default:
		c.notice("invalid: unknown message type")
	}
}

func skipWS(p []byte, i int) int {
	for i < len(p) && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r') {
		i++
	}
	return i
}

func comma(p []byte, i int) (int, bool) {
	i = skipWS(p, i)
	if i >= len(p) || p[i] != ',' {
		return i, false
	}
	return skipWS(p, i+1), true
}

// scanString returns the raw (still escaped) contents of the JSON string at
// p[i] and the index after its closing quote.
func scanString(p []byte, i int) ([]byte, int, bool) {
	if i >= len(p) || p[i] != '"' {
		return nil, i, false
	}
	for j := i + 1; j < len(p); j++ {
		switch p[j] {
		case '\\':
			j++
		case '"':
			return p[i+1 : j], j + 1, true
		}
	}
	return nil, i, false
}

// findID finds the value of the "id" key in an event object: the byte
// sequence `"id"` followed by ':' can only be that key in valid JSON (a quote
// inside a string is escaped), whatever the field order.
func findID(p []byte) ([]byte, bool) {
	for off := 0; ; {
		k := bytes.Index(p[off:], []byte(`"id"`))
		if k < 0 {
			return nil, false
		}
		k += off
		off = k + 4
		if k > 0 && p[k-1] == '\\' {
			continue
		}
		j := skipWS(p, off)
		if j >= len(p) || p[j] != ':' {
			continue
		}
		j = skipWS(p, j+1)
		if j+66 > len(p) || p[j] != '"' || p[j+65] != '"' {
			return nil, false
		}
		id := p[j+1 : j+65]
		for _, ch := range id {
			if !(ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'f') {
				return nil, false
			}
		}
		return id, true
	}
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}
