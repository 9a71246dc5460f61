package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/coder/websocket"
)

// chunkConn hands out data at most k bytes per Read, then io.EOF.
type chunkConn struct {
	net.Conn
	data []byte
	k    int
}

func (c *chunkConn) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.data[:min(len(c.data), c.k)])
	c.data = c.data[n:]
	return n, nil
}

type fuzzMsg struct {
	typ     websocket.MessageType
	payload []byte
}

const fuzzLimit = 1 << 10

// readAllFrames reads data (k bytes per read) to its end: the messages and
// the error that ended it.
func readAllFrames(t *testing.T, data []byte, k int) ([]fuzzMsg, error) {
	t.Helper()
	c := &Conn{wstop: true} // pings are dropped, not answered
	fr := newFrameReader(&chunkConn{data: data, k: k}, nil, fuzzLimit)
	var out []fuzzMsg
	for i := 0; ; i++ {
		if i > len(data)+1 {
			t.Fatalf("reader did not end after %d messages from %d bytes", i, len(data))
		}
		typ, p, err := fr.next(c)
		if len(fr.buf) > readBufMax+fuzzLimit+14 {
			t.Fatalf("buffer grew to %d", len(fr.buf))
		}
		if err != nil {
			return out, err
		}
		if len(p) > fuzzLimit {
			t.Fatalf("message of %d bytes over the limit %d", len(p), fuzzLimit)
		}
		out = append(out, fuzzMsg{typ, bytes.Clone(p)})
	}
}

func fhdr(b0 byte, n int) []byte {
	switch {
	case n < 126:
		return []byte{b0, byte(n)}
	case n < 1<<16:
		return binary.BigEndian.AppendUint16([]byte{b0, 126}, uint16(n))
	}
	return binary.BigEndian.AppendUint64([]byte{b0, 127}, uint64(n))
}

func fframe(b0 byte, p []byte) []byte { return append(fhdr(b0, len(p)), p...) }

func FuzzFrames(f *testing.F) {
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	f.Add(byte(1), fframe(0x81, []byte(`["EOSE","x"]`)))
	f.Add(byte(3), cat(fframe(0x01, []byte("ab")), fframe(0x89, []byte("p")), fframe(0x80, []byte("cd")), fframe(0x82, nil)))
	f.Add(byte(2), cat(fframe(0x81, bytes.Repeat([]byte("a"), 300)), fframe(0x88, []byte{3, 232, 'b', 'y', 'e'})))
	f.Add(byte(5), binary.BigEndian.AppendUint64([]byte{0x81, 127}, 1<<63))
	f.Add(byte(1), binary.BigEndian.AppendUint64([]byte{0x81, 127}, 70000))
	f.Add(byte(1), []byte{0x81, 0x85, 1, 2, 3, 4, 'a'})
	f.Add(byte(1), []byte{0xc1, 0})
	f.Add(byte(1), []byte{0x09, 0})
	f.Add(byte(1), []byte{0x88, 1, 3})
	f.Add(byte(1), fframe(0x89, bytes.Repeat([]byte("p"), 126)))
	f.Add(byte(4), cat(fframe(0x01, []byte("ab")), fframe(0x81, []byte("cd"))))
	f.Add(byte(4), fframe(0x80, []byte("cd")))
	f.Add(byte(7), cat(fframe(0x81, nil), fframe(0x83, nil)))
	f.Fuzz(func(t *testing.T, k byte, data []byte) {
		whole, werr := readAllFrames(t, data, len(data)+1)
		split, serr := readAllFrames(t, data, int(k%32)+1)
		if werr == nil || serr == nil {
			t.Fatal("reading ended without an error")
		}
		if werr.Error() != serr.Error() {
			t.Fatalf("whole: %v, in pieces of %d: %v", werr, int(k%32)+1, serr)
		}
		if len(whole) != len(split) {
			t.Fatalf("whole: %d messages, in pieces: %d", len(whole), len(split))
		}
		for i := range whole {
			if whole[i].typ != split[i].typ || !bytes.Equal(whole[i].payload, split[i].payload) {
				t.Fatalf("message %d differs read whole and in pieces", i)
			}
		}
		var ce websocket.CloseError
		if errors.As(werr, &ce) && !errors.Is(werr, io.EOF) {
			_ = ce.Reason // callers make it printable (safe.Line)
		}
	})
}

// Every split of a stream of frames reads the same as the whole stream.
func TestFramesEverySplit(t *testing.T) {
	data := bytes.Join([][]byte{
		fframe(0x81, []byte(`["EOSE","x"]`)),
		fframe(0x81, bytes.Repeat([]byte("e"), 200)),
		fframe(0x01, []byte("ab")), fframe(0x8a, nil), fframe(0x00, []byte("cd")), fframe(0x80, nil),
		fframe(0x81, nil),
		fframe(0x88, []byte{3, 232, 0xff, 0xfe}),
	}, nil)
	whole, werr := readAllFrames(t, data, len(data))
	if len(whole) != 4 || string(whole[2].payload) != "abcd" {
		t.Fatalf("whole: %d messages", len(whole))
	}
	for k := 1; k < len(data); k++ {
		got, err := readAllFrames(t, data, k)
		if err.Error() != werr.Error() || len(got) != len(whole) {
			t.Fatalf("k=%d: %v, %d messages", k, err, len(got))
		}
		for i := range got {
			if !bytes.Equal(got[i].payload, whole[i].payload) {
				t.Fatalf("k=%d: message %d differs", k, i)
			}
		}
	}
	if websocket.CloseStatus(werr) != 1000 {
		t.Fatalf("close: %v", werr)
	}
}

// Regressions: frames RFC 6455 forbids are refused, not accepted or skipped.
func TestFramesProtocolErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		data []byte
		want error
	}{
		"rsv1 text":         {fframe(0xc1, []byte("{}")), errRSV},
		"rsv3 ping":         {fframe(0x99, nil), errRSV},
		"ping over 125":     {fframe(0x89, bytes.Repeat([]byte("p"), 126)), errBadControl},
		"fragmented ping":   {fframe(0x09, []byte("p")), errBadControl},
		"fragmented close":  {fframe(0x08, []byte{3, 232}), errBadControl},
		"1-byte close":      {fframe(0x88, []byte{3}), errBadControl},
		"masked":            {[]byte{0x81, 0x81, 1, 2, 3, 4, 'a'}, errMaskedFrame},
		"huge 64-bit":       {binary.BigEndian.AppendUint64([]byte{0x81, 127}, 1<<63), ErrMessageTooBig},
		"over limit":        {fhdr(0x81, fuzzLimit+1), ErrMessageTooBig},
		"fragments over":    {append(fframe(0x01, make([]byte, fuzzLimit)), fframe(0x80, []byte("x"))...), ErrMessageTooBig},
		"continuation only": {fframe(0x80, []byte("x")), nil},
		"new text in frag":  {append(fframe(0x01, []byte("x")), fframe(0x81, []byte("y"))...), nil},
		"unknown opcode":    {fframe(0x83, nil), nil},
	} {
		msgs, err := readAllFrames(t, tc.data, len(tc.data)+1)
		if len(msgs) != 0 || err == nil || errors.Is(err, io.EOF) {
			t.Errorf("%s: %d messages, err %v", name, len(msgs), err)
			continue
		}
		if tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", name, err, tc.want)
		}
	}
}

// Regression: the size of the last reassembled message (kept in msg) must
// not count against the next, unfragmented one.
func TestFramesLimitAfterFragmented(t *testing.T) {
	big := bytes.Repeat([]byte("a"), fuzzLimit-10)
	data := bytes.Join([][]byte{
		fframe(0x01, big[:10]), fframe(0x80, big[10:]),
		fframe(0x81, bytes.Repeat([]byte("b"), 100)),
		fframe(0x01, []byte("c")), fframe(0x80, bytes.Repeat([]byte("d"), 100)),
	}, nil)
	msgs, err := readAllFrames(t, data, len(data)+1)
	if len(msgs) != 3 || !errors.Is(err, io.EOF) {
		t.Fatalf("%d messages, err %v", len(msgs), err)
	}
	if !bytes.Equal(msgs[0].payload, big) || len(msgs[1].payload) != 100 || len(msgs[2].payload) != 101 {
		t.Fatal("wrong messages")
	}
}
