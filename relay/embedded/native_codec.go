package embedded

import (
	"encoding/binary"
	"encoding/hex"
	"errors"

	"github.com/nbd-wtf/go-nostr"
)

// The native store keeps events in a compact binary form, several times
// faster to decode than JSON:
//
//	0x01 flags id(32) pubkey sig created_at(zigzag varint) kind(zigzag varint)
//	     ntags(uvarint) { nfields(uvarint) { len(uvarint) bytes }... }... content(len bytes)
//
// pubkey and sig are 32 and 64 raw bytes when they are lowercase hex of that
// size (flags bits 0 and 1), else length-prefixed strings.
const codecV1 = 0x01

var errCorrupt = errors.New("corrupt stored event")

func isLowerHex(s string, n int) bool {
	if len(s) != 2*n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if _, ok := unhex(s[i]); !ok {
			return false
		}
	}
	return true
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// encodeEvent encodes ev, whose id is id.
func encodeEvent(ev *nostr.Event, id [32]byte) []byte {
	size := 1 + 1 + 32 + 32 + 64 + 20 + len(ev.Content) + 8
	for _, t := range ev.Tags {
		size += 2
		for _, f := range t {
			size += 2 + len(f)
		}
	}
	b := make([]byte, 0, size)
	var flags byte
	pkRaw, sigRaw := isLowerHex(ev.PubKey, 32), isLowerHex(ev.Sig, 64)
	if pkRaw {
		flags |= 1
	}
	if sigRaw {
		flags |= 2
	}
	b = append(b, codecV1, flags)
	b = append(b, id[:]...)
	if pkRaw {
		b, _ = hex.AppendDecode(b, []byte(ev.PubKey))
	} else {
		b = appendStr(b, ev.PubKey)
	}
	if sigRaw {
		b, _ = hex.AppendDecode(b, []byte(ev.Sig))
	} else {
		b = appendStr(b, ev.Sig)
	}
	b = binary.AppendVarint(b, int64(ev.CreatedAt))
	b = binary.AppendVarint(b, int64(ev.Kind))
	b = binary.AppendUvarint(b, uint64(len(ev.Tags)))
	for _, t := range ev.Tags {
		b = binary.AppendUvarint(b, uint64(len(t)))
		for _, f := range t {
			b = appendStr(b, f)
		}
	}
	return appendStr(b, ev.Content)
}

// decodeEvent decodes v (which it does not keep).
func decodeEvent(v []byte) (*nostr.Event, error) {
	if len(v) < 2+32 || v[0] != codecV1 {
		return nil, errCorrupt
	}
	flags := v[1]
	// All strings share one allocation: the hex fields, then a copy of v.
	var hx [64 + 64 + 128]byte
	hex.Encode(hx[:64], v[2:34])
	d := hexOrStr{v: v, p: 34, hx: hx[:], nh: 64}
	pkStr, ok := d.field(flags&1 != 0, 32) // non-hex forms, as slices of v
	if !ok {
		return nil, errCorrupt
	}
	sigStr, ok := d.field(flags&2 != 0, 64)
	if !ok {
		return nil, errCorrupt
	}
	p, nh := d.p, d.nh
	all := string(append(append(append(hx[:nh:nh], pkStr...), sigStr...), v[p:]...))
	ev := &nostr.Event{ID: all[:64]}
	o := 64
	if flags&1 != 0 {
		ev.PubKey, o = all[o:o+64], o+64
	}
	if flags&2 != 0 {
		ev.Sig, o = all[o:o+128], o+128
	}
	if flags&1 == 0 {
		ev.PubKey, o = all[o:o+len(pkStr)], o+len(pkStr)
	}
	if flags&2 == 0 {
		ev.Sig, o = all[o:o+len(sigStr)], o+len(sigStr)
	}
	rest := all[o:] // a string copy of vr
	vr := v[p:]
	q := 0
	readUvarint := func() (uint64, bool) {
		x, n := binary.Uvarint(vr[q:])
		if n <= 0 {
			return 0, false
		}
		q += n
		return x, true
	}
	readVarint := func() (int64, bool) { // zig-zag over a uvarint, as binary.Varint
		u, ok := readUvarint()
		return int64(u>>1) ^ -int64(u&1), ok
	}
	readS := func() (string, bool) {
		n, ok := readUvarint()
		if !ok || n > uint64(len(vr)-q) {
			return "", false
		}
		s := rest[q : q+int(n)]
		q += int(n)
		return s, true
	}
	ts, ok1 := readVarint()
	kind, ok2 := readVarint()
	ntags, ok3 := readUvarint()
	if !ok1 || !ok2 || !ok3 || ntags > uint64(len(rest)) {
		return nil, errCorrupt
	}
	ev.CreatedAt, ev.Kind = nostr.Timestamp(ts), int(kind)
	if ntags > 0 {
		ev.Tags = make(nostr.Tags, ntags)
		for i := range ev.Tags {
			nf, ok := readUvarint()
			if !ok || nf > uint64(len(rest)-q) {
				return nil, errCorrupt
			}
			t := make(nostr.Tag, nf)
			for j := range t {
				if t[j], ok = readS(); !ok {
					return nil, errCorrupt
				}
			}
			ev.Tags[i] = t
		}
	}
	content, ok := readS()
	if !ok || q != len(rest) {
		return nil, errCorrupt
	}
	ev.Content = content
	return ev, nil
}

// readStr reads a length-prefixed string at v[p:].
// hexOrStr reads the pubkey and sig fields of an encoded event at v[p:]:
// each is stored either as raw bytes, hex-encoded into hx[nh:], or (when
// it is not lowercase hex) as a string.
type hexOrStr struct {
	v, hx []byte
	p, nh int
}

// field reads a field of n raw bytes when isHex, else a string, which it
// returns; false when v is short.
func (d *hexOrStr) field(isHex bool, n int) ([]byte, bool) {
	if !isHex {
		s, q, ok := readStr(d.v, d.p)
		if ok {
			d.p = q
		}
		return s, ok
	}
	if len(d.v) < d.p+n {
		return nil, false
	}
	hex.Encode(d.hx[d.nh:d.nh+2*n], d.v[d.p:d.p+n])
	d.nh += 2 * n
	d.p += n
	return nil, true
}

func readStr(v []byte, p int) ([]byte, int, bool) {
	n, k := binary.Uvarint(v[p:])
	if k <= 0 || n > uint64(len(v)-p-k) {
		return nil, 0, false
	}
	p += k
	return v[p : p+int(n)], p + int(n), true
}
