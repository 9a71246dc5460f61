package wire

import (
	"encoding/binary"
	"math/bits"

	"github.com/relaybench/relaybench/nostr"
)

// skipString is scanString for a string whose value is not needed (inside
// an event object the parser only skips): the same checks (escapes valid,
// no raw control characters), eight bytes at a time over the plain bytes,
// non-ASCII included, that make up most of an event's content.
func skipString(p []byte, i int) (int, error) {
	i++
	for {
		i = nextSpecial(p, i)
		if i >= len(p) {
			return i, errUnterminated
		}
		switch c := p[i]; {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			if i+1 >= len(p) {
				return i, errUnterminated
			}
			switch p[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(p) || nostr.Hex4(p[i+2:i+6]) < 0 {
					return i, errBadString
				}
				i += 6
			default:
				return i, errBadString
			}
		default: // a control character
			return i, errBadString
		}
	}
}

// nextSpecial returns the index of the first quote, backslash or control
// character at or after i, or len(p).
func nextSpecial(p []byte, i int) int {
	for ; i+8 <= len(p); i += 8 {
		if m := special8(binary.LittleEndian.Uint64(p[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(p); i++ {
		if isSpecial(p[i]) {
			return i
		}
	}
	return i
}

func isSpecial(c byte) bool { return c == '"' || c == '\\' || c < 0x20 }

const (
	swarOnes  = 0x0101010101010101
	swarHighs = 0x8080808080808080
)

// special8 flags the bytes of v (little endian) that are a quote, a
// backslash or a control character: the lowest flagged byte is exactly the
// first such byte (higher flags may be false, from borrows).
func special8(v uint64) uint64 {
	q := v ^ ('"' * swarOnes)
	b := v ^ ('\\' * swarOnes)
	return ((v-0x20*swarOnes)&^v | (q-swarOnes)&^q | (b-swarOnes)&^b) & swarHighs
}
