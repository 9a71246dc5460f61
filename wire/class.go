package wire

import "strings"

// Class is the machine-readable prefix of an OK or CLOSED reason (NIP-01),
// e.g. "duplicate" for "duplicate: already have this event".
type Class string

// The NIP-01 reason prefixes, plus ClassNone and ClassOther.
const (
	ClassNone         Class = ""              // accepted OK (or CLOSED) with an empty reason
	ClassDuplicate    Class = "duplicate"     // already have this event
	ClassBlocked      Class = "blocked"       // pubkey or IP blocked
	ClassRateLimited  Class = "rate-limited"  // slow down
	ClassInvalid      Class = "invalid"       // malformed or bad id/signature
	ClassPoW          Class = "pow"           // not enough proof of work
	ClassRestricted   Class = "restricted"    // not allowed to write here
	ClassError        Class = "error"         // relay-side failure
	ClassAuthRequired Class = "auth-required" // NIP-42 authentication needed
	ClassMute         Class = "mute"          // nobody listening (ephemeral)
	ClassReplaced     Class = "replaced"      // the relay holds a newer version (strfry: "replaced: have newer event")
	ClassOther        Class = "other"         // a reason with no known prefix
)

// Classify returns the class of a reason: the known prefix before the first
// ':' (surrounding spaces ignored), ClassNone for an empty reason and
// ClassOther for anything else. One exception: a refusal whose text says the
// relay holds a newer version of the event is ClassReplaced whatever its
// prefix (ORLY answers "blocked: event is older than existing replaceable
// event"): refusing a superseded version is what NIP-01 asks, not a block.
func Classify(reason string) Class {
	if reason == "" {
		return ClassNone
	}
	if saysSuperseded(reason) {
		return ClassReplaced
	}
	prefix := reason
	if i := strings.IndexByte(reason, ':'); i >= 0 {
		prefix = reason[:i]
	} else {
		return ClassOther
	}
	switch Class(strings.TrimSpace(prefix)) {
	case ClassDuplicate:
		return ClassDuplicate
	case ClassBlocked:
		return ClassBlocked
	case ClassRateLimited:
		return ClassRateLimited
	case ClassInvalid:
		return ClassInvalid
	case ClassPoW:
		return ClassPoW
	case ClassRestricted:
		return ClassRestricted
	case ClassError:
		return ClassError
	case ClassAuthRequired:
		return ClassAuthRequired
	case ClassMute:
		return ClassMute
	case ClassReplaced:
		return ClassReplaced
	}
	return ClassOther
}

// saysSuperseded reports whether a refusal's text says the relay already
// holds a newer version of the (replaceable or addressable) event.
func saysSuperseded(reason string) bool {
	r := strings.ToLower(reason)
	for _, s := range []string{"have newer event", "older than existing replaceable", "older than existing addressable", "newer version", "newer event exists"} {
		if strings.Contains(r, s) {
			return true
		}
	}
	return false
}
