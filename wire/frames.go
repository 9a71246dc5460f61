package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"

	"github.com/relaybench/relaybench/internal/mono"
)

// Reading on a plain ws:// connection.
//
// coder/websocket does the handshake; after it, the connection's reader
// parses the relay's frames itself straight from the TCP socket: one read
// syscall fills a buffer with as many frames as have arrived, and each
// complete, unfragmented message is handed to the parser where it lies in
// that buffer (no copy, no per-message allocation, no lock). Fragmented
// messages are reassembled; pings are answered with pongs (queued for the
// writer); a close frame ends the connection with the relay's status and
// reason. On wss:// coder/websocket reads (see readLoop).

const (
	readBufMin = 4 << 10   // read buffer of a new connection (idle ones keep it small)
	readBufMax = 256 << 10 // it doubles while reads fill it, up to this
)

// hsConn is the TCP connection as the HTTP handshake sees it: it hands the
// HTTP client nothing past the end of the response head, so that frames the
// relay sent right behind its 101 (an AUTH challenge) are not buffered out
// of reach inside the HTTP client. They are kept in rest for the frame
// reader.
type hsConn struct {
	net.Conn
	mu   sync.Mutex
	rest []byte // read from the socket, not yet handed out
	tail []byte // last bytes of the head handed out (to find "\r\n\r\n" across reads)
	done bool   // the whole response head has been handed out
}

var headEnd = []byte("\r\n\r\n")

func (h *hsConn) Read(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.rest) == 0 {
		if h.done {
			return h.Conn.Read(p)
		}
		var tmp [4096]byte
		n, err := h.Conn.Read(tmp[:])
		if n == 0 {
			return 0, err
		}
		h.rest = append(h.rest, tmp[:n]...)
	}
	if h.done {
		n := copy(p, h.rest)
		h.rest = h.rest[n:]
		return n, nil
	}
	give, found := len(h.rest), false
	joined := append(append(make([]byte, 0, len(h.tail)+len(h.rest)), h.tail...), h.rest...)
	if i := bytes.Index(joined, headEnd); i >= 0 {
		give, found = i+len(headEnd)-len(h.tail), true
	}
	n := copy(p, h.rest[:give])
	t := append(h.tail, h.rest[:n]...)
	h.tail = append(h.tail[:0], t[max(0, len(t)-3):]...)
	h.rest = h.rest[n:]
	h.done = found && n == give
	return n, nil
}

// takeRest returns the bytes read past the handshake, for the frame reader.
func (h *hsConn) takeRest() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.rest
	h.rest = nil
	h.done = true
	return r
}

// frameReader reads the relay's frames from the socket.
type frameReader struct {
	nc    net.Conn
	buf   []byte // buf[r:w] is read and not yet parsed
	r, w  int
	limit int64
	msg   []byte // fragments of a message being reassembled
	frag  bool   // a fragmented message is under way
	ftyp  websocket.MessageType
	// unparsed is how many bytes were read and not yet handed on, as of the
	// last message handed on (0 while the reader waits on the socket).
	unparsed atomic.Int64
	reads    atomic.Int64 // read calls on the socket
}

// Reads returns how many reads the connection's reader made on the socket
// (plain ws:// only; 0 otherwise): with Stats().FramesIn, how many messages
// each read brought in.
func (c *Conn) Reads() int64 {
	if c.fr == nil {
		return 0
	}
	return c.fr.reads.Load()
}

func newFrameReader(nc net.Conn, rest []byte, limit int64) *frameReader {
	fr := new(frameReader)
	fr.init(nc, rest, limit)
	return fr
}

// init sets up a zero frameReader in place (a Conn holds its own: see Conn.frs).
func (fr *frameReader) init(nc net.Conn, rest []byte, limit int64) {
	fr.nc, fr.limit, fr.buf = nc, limit, make([]byte, max(readBufMin, len(rest)))
	fr.w = copy(fr.buf, rest)
}

// errMaskedFrame: servers must not mask their frames (RFC 6455 5.1).
var errMaskedFrame = errors.New("read: the relay sent a masked frame")

// errRSV: no extension was negotiated, so the RSV bits must be 0 (RFC 6455 5.2).
var errRSV = errors.New("read: the relay sent a frame with RSV bits set")

// errBadControl: control frames are unfragmented, at most 125 bytes, and a
// close frame's body is empty or starts with a 2-byte status (RFC 6455 5.5).
var errBadControl = errors.New("read: the relay sent a malformed control frame")

// room makes space for need unparsed bytes in all before a read: it
// compacts the buffer and grows it when a read filled it (the relay is
// ahead of us) or a frame does not fit.
func (fr *frameReader) room(need int) {
	if fr.r > 0 && (fr.r == fr.w || len(fr.buf)-fr.r < need || fr.w == len(fr.buf)) {
		fr.w = copy(fr.buf, fr.buf[fr.r:fr.w])
		fr.r = 0
	}
	if need > len(fr.buf) || fr.w == len(fr.buf) {
		size := max(need, min(2*len(fr.buf), readBufMax), len(fr.buf))
		nb := make([]byte, size)
		fr.w = copy(nb, fr.buf[fr.r:fr.w])
		fr.r = 0
		fr.buf = nb
	}
}

// fill reads more bytes from the socket (blocking), making room for need
// unparsed bytes in all.
func (fr *frameReader) fill(need int) error {
	fr.room(need)
	fr.unparsed.Store(0) // waiting for the relay, not behind it
	n, err := fr.nc.Read(fr.buf[fr.w:])
	fr.reads.Add(1)
	fr.w += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// next returns the next data message: its type and payload, valid until
// the next call, reading from the socket as needed.
func (fr *frameReader) next(c *Conn) (websocket.MessageType, []byte, error) {
	for {
		typ, payload, need, err := fr.parse(c)
		if err != nil || need == 0 {
			return typ, payload, err
		}
		if err := fr.fill(need); err != nil {
			return 0, nil, err
		}
	}
}

// parse returns the next data message already buffered, or need > 0: the
// buffered bytes the next frame needs in all. Control frames are handled
// here (a ping answered through c).
func (fr *frameReader) parse(c *Conn) (typ websocket.MessageType, payload []byte, need int, err error) {
	for {
		hdr, plen, err := fr.header()
		if err != nil {
			return 0, nil, 0, err
		}
		if hdr == 0 {
			return 0, nil, int(plen), nil
		}
		b0 := fr.buf[fr.r]
		fin, op := b0&0x80 != 0, b0&0x0f
		if b0&0x70 != 0 {
			return 0, nil, 0, errRSV
		}
		if op >= 8 && (!fin || plen > 125) {
			return 0, nil, 0, errBadControl
		}
		if plen > fr.limit || op == 0 && fr.frag && int64(len(fr.msg))+plen > fr.limit {
			return 0, nil, 0, ErrMessageTooBig
		}
		total := hdr + int(plen)
		if fr.w-fr.r < total {
			return 0, nil, total, nil
		}
		payload := fr.buf[fr.r+hdr : fr.r+total]
		fr.r += total
		switch op {
		case 0x1, 0x2: // text, binary
			if fr.frag {
				return 0, nil, 0, errors.New("read: new message inside a fragmented one")
			}
			typ := websocket.MessageText
			if op == 0x2 {
				typ = websocket.MessageBinary
			}
			if fin {
				fr.unparsed.Store(int64(fr.w - fr.r))
				return typ, payload, 0, nil
			}
			fr.frag, fr.ftyp, fr.msg = true, typ, append(fr.msg[:0], payload...)
		case 0x0: // continuation
			if !fr.frag {
				return 0, nil, 0, errors.New("read: continuation frame without a message")
			}
			fr.msg = append(fr.msg, payload...)
			if fin {
				fr.frag = false
				m := fr.msg
				if cap(fr.msg) > 1<<20 {
					fr.msg = nil
				}
				fr.unparsed.Store(int64(fr.w - fr.r))
				return fr.ftyp, m, 0, nil
			}
		case 0x8: // close
			ce := websocket.CloseError{Code: websocket.StatusNoStatusRcvd}
			if len(payload) == 1 {
				return 0, nil, 0, errBadControl
			}
			if len(payload) >= 2 {
				ce.Code = websocket.StatusCode(binary.BigEndian.Uint16(payload))
				ce.Reason = string(payload[2:])
			}
			return 0, nil, 0, ce
		case 0x9: // ping
			c.pong(payload)
		case 0xa: // pong
		default:
			return 0, nil, 0, fmt.Errorf("read: unknown frame opcode %d", op)
		}
	}
}

// header returns the next frame's header length and payload length, or a
// zero header length and the bytes needed when it is not all buffered yet.
func (fr *frameReader) header() (int, int64, error) {
	if fr.w-fr.r < 2 {
		return 0, 2, nil
	}
	b1 := fr.buf[fr.r+1]
	if b1&0x80 != 0 {
		return 0, 0, errMaskedFrame
	}
	hdr := 2
	switch b1 & 0x7f {
	case 126:
		hdr = 4
	case 127:
		hdr = 10
	}
	if fr.w-fr.r < hdr {
		return 0, int64(hdr), nil
	}
	h := fr.buf[fr.r:]
	var plen int64
	switch hdr {
	case 2:
		plen = int64(b1 & 0x7f)
	case 4:
		plen = int64(binary.BigEndian.Uint16(h[2:]))
	default:
		u := binary.BigEndian.Uint64(h[2:])
		if u > 1<<62 {
			return 0, 0, ErrMessageTooBig
		}
		plen = int64(u)
	}
	return hdr, plen, nil
}

// pong queues the answer to a ping (written by the writer goroutine, so
// that the reader never blocks on a write).
func (c *Conn) pong(payload []byte) {
	if err := c.lockWriter(); err != nil {
		return
	}
	c.wq = appendMaskedControl(c.wq, uint32(c.rng.Uint64()), 0x8a, payload)
	if err := c.flushUnlock(true); err != nil {
		c.fail(err)
	}
}

// appendMaskedControl appends one masked client control frame (payload at
// most 125 bytes, as a ping's is).
func appendMaskedControl(b []byte, key uint32, b0 byte, payload []byte) []byte {
	payload = payload[:min(len(payload), 125)]
	b = append(b, b0, 0x80|byte(len(payload)))
	b = binary.LittleEndian.AppendUint32(b, key)
	start := len(b)
	b = append(b, payload...)
	maskBytes(b[start:], key)
	return b
}

// readDirect is readLoop on a plain ws:// connection.
func (c *Conn) readDirect(reasons map[string]string) {
	var f frame
	for {
		typ, buf, err := c.fr.next(c)
		if err != nil {
			c.fail(readError(err))
			return
		}
		c.handle(typ, buf, mono.Now(), &f, reasons)
	}
}

// handle counts, parses and dispatches one message read at recv.
func (c *Conn) handle(typ websocket.MessageType, buf []byte, recv int64, f *frame, reasons map[string]string) {
	c.st.framesIn.Add(1)
	c.st.bytesIn.Add(int64(len(buf)))
	if typ != websocket.MessageText {
		c.malformed(buf, errBinary)
	} else if err := parseFrameKnown(buf, f, c.known); err != nil {
		c.malformed(buf, err)
	} else {
		c.dispatch(f, recv, reasons)
	}
}

// LocalAddr returns the local address of the connection's TCP socket.
func (c *Conn) LocalAddr() net.Addr { return c.nc.LocalAddr() }
