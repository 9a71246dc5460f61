package verify

import (
	"bytes"

	"github.com/relaybench/relaybench/nostr"
)

// KnownPrefix returns n > 0 when p begins with n bytes that are, byte for
// byte, event known as relaybench published it (published) or as a relay
// wrote it and an earlier EventAt already checked in full (its id, its
// signature, and as a complete JSON object that the reader had found in a
// message): such bytes need no scan and no check again (EventAt(published,
// …) then gives the same answer as EventAt of them). 0: neither.
func (c *Checker) KnownPrefix(p []byte, known *nostr.Event, published []byte) int {
	if len(published) > 0 && len(p) >= len(published) && Same(p[:len(published)], published) {
		return len(published)
	}
	if a, ok := c.alt.Load(known); ok {
		if b := a.([]byte); len(b) > 0 && len(p) >= len(b) && bytes.Equal(p[:len(b)], b) {
			return len(b)
		}
	}
	return 0
}
