package workload

import (
	"encoding/hex"

	"github.com/relaybench/relaybench/internal/secp"
	"github.com/relaybench/relaybench/nostr"
)

// sigCache parses returned events and checks id and signature once per
// distinct event (the same event comes back in many answers).
type sigCache struct {
	ok map[string]*nostr.Event // raw JSON → parsed, valid event
}

func newSigCache() *sigCache { return &sigCache{ok: map[string]*nostr.Event{}} }

// check parses raw and verifies its id and BIP-340 signature.
func (c *sigCache) check(raw []byte) (*nostr.Event, bool) {
	if e, ok := c.ok[string(raw)]; ok {
		return e, true
	}
	e, err := nostr.ParseEvent(raw)
	if err != nil || !e.CheckID() || !ValidSignature(e) {
		return nil, false
	}
	c.ok[string(raw)] = e
	return e, true
}

// ValidSignature reports whether e.Sig is a valid BIP-340 signature of e.ID
// by e.PubKey.
func ValidSignature(e *nostr.Event) bool {
	var pub, msg [32]byte
	var sig [64]byte
	if hex.DecodedLen(len(e.PubKey)) != 32 || hex.DecodedLen(len(e.ID)) != 32 || hex.DecodedLen(len(e.Sig)) != 64 {
		return false
	}
	if _, err := hex.Decode(pub[:], []byte(e.PubKey)); err != nil {
		return false
	}
	if _, err := hex.Decode(msg[:], []byte(e.ID)); err != nil {
		return false
	}
	if _, err := hex.Decode(sig[:], []byte(e.Sig)); err != nil {
		return false
	}
	return secp.Verify(&pub, &msg, &sig)
}
