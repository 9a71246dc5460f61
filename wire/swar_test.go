package wire

import (
	"math/rand/v2"
	"testing"
)

// skipString accepts and rejects exactly what scanString does, and ends
// at the same place.
func TestSkipStringMatchesScanString(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("abcXYZ019 {}:,\"\\\\\\ubnrt/\x00\x1f\x7f\x80\xc3\xa9\xff")
	for range 50000 {
		p := make([]byte, 1+rng.IntN(40))
		p[0] = '"'
		for k := 1; k < len(p); k++ {
			if rng.IntN(5) == 0 {
				p[k] = alphabet[rng.IntN(len(alphabet))]
			} else {
				p[k] = byte(0x20 + rng.IntN(0x5f))
			}
		}
		_, want, werr := scanString(p, 0)
		got, gerr := skipString(p, 0)
		if (werr == nil) != (gerr == nil) || werr == nil && got != want {
			t.Fatalf("%q: skipString = %d, %v; scanString = %d, %v", p, got, gerr, want, werr)
		}
	}
}

func TestNextSpecial(t *testing.T) {
	for _, c := range []byte{'"', '\\', 0, 0x1f} {
		for pos := range 20 {
			p := []byte("abcdefghijklmnopqrstuvwxyz\xc3\xa9\xff~")
			p[pos] = c
			for start := 0; start <= pos; start++ {
				if got := nextSpecial(p, start); got != pos {
					t.Fatalf("nextSpecial(%q, %d) = %d, want %d", p, start, got, pos)
				}
			}
		}
	}
	if got := nextSpecial([]byte("plain ascii and ünïcode"), 0); got != len("plain ascii and ünïcode") {
		t.Errorf("no special: %d", got)
	}
}
