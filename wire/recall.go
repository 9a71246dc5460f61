package wire

import "hash/maphash"

// recall is a set of strings a connection must recognise later: the ids of
// events whose OK it stopped waiting for (expired or cancelled), the ids of
// subscriptions it closed. Its memory is bounded: the last exactMax entries
// are kept exactly; older ones go into a fixed-size Bloom filter, allocated
// only when the exact set first overflows. A Bloom filter has no false
// negatives and few false positives: an id it has never seen may rarely be
// taken for one it has. Callers use it so that such a mistake only ever
// excuses the relay (a foreign OK taken for a late one), never blames it.
type recall struct {
	exact    map[string]struct{}
	exactMax int
	bits     []uint64 // nil until the exact set first overflows
	nbits    uint64   // len(bits)*64, a power of two
}

// recallSeed hashes every recall's entries (the seed only spreads bits).
var recallSeed = maphash.MakeSeed()

const recallProbes = 4

func newRecall(exactMax int, bloomBits uint64) recall {
	return recall{exactMax: exactMax, nbits: bloomBits}
}

// add remembers s (kept, not copied: s must not change).
func (r *recall) add(s string) {
	if r.exact == nil {
		r.exact = make(map[string]struct{}, 4)
	}
	if len(r.exact) >= r.exactMax {
		r.spill()
	}
	r.exact[s] = struct{}{}
}

// spill moves the exact entries into the Bloom filter.
func (r *recall) spill() {
	if r.bits == nil {
		r.bits = make([]uint64, r.nbits/64)
	}
	for s := range r.exact {
		r.setBits(maphash.String(recallSeed, s))
	}
	clear(r.exact)
}

func (r *recall) setBits(h uint64) {
	a, b := h, h>>32|1
	for i := uint64(0); i < recallProbes; i++ {
		p := (a + i*b) & (r.nbits - 1)
		r.bits[p>>6] |= 1 << (p & 63)
	}
}

func (r *recall) hasBits(h uint64) bool {
	a, b := h, h>>32|1
	for i := uint64(0); i < recallProbes; i++ {
		p := (a + i*b) & (r.nbits - 1)
		if r.bits[p>>6]&(1<<(p&63)) == 0 {
			return false
		}
	}
	return true
}

// take reports whether s (the raw bytes of an unescaped JSON string, or
// the decoded one) was remembered, and forgets it if it was kept exactly
// (an entry in the Bloom filter cannot be forgotten). It does not allocate.
func (r *recall) take(s []byte) bool {
	if _, ok := r.exact[string(s)]; ok {
		delete(r.exact, string(s))
		return true
	}
	return r.bits != nil && r.hasBits(maphash.Bytes(recallSeed, s))
}

// has reports whether s was remembered, without forgetting it.
func (r *recall) has(s []byte) bool {
	if _, ok := r.exact[string(s)]; ok {
		return true
	}
	return r.bits != nil && r.hasBits(maphash.Bytes(recallSeed, s))
}

// approximate reports whether some entries are only in the Bloom filter.
func (r *recall) approximate() bool { return r.bits != nil }
