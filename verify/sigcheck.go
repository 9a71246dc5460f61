package verify

import (
	"encoding/hex"

	"github.com/relaybench/relaybench/internal/secp"
	"github.com/relaybench/relaybench/nostr"
)

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
