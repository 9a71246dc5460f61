package results

// CheckStatus is how one conformance check ended: exactly one of the
// statuses below.
type CheckStatus string

// The statuses of a conformance check.
const (
	// CheckPass: the relay did what the sentence asks.
	CheckPass CheckStatus = "pass"
	// CheckFail: a MUST of the sentence was violated (see Detail, Evidence).
	CheckFail CheckStatus = "fail"
	// CheckNamed: the relay differs from a SHOULD or MAY (or from a rule
	// without a MUST): named with its sentence, not a failure.
	CheckNamed CheckStatus = "named"
	// CheckNotAnnounced: the relay does not announce (NIP-11
	// supported_nips) the NIP the check rests on; nothing was sent.
	CheckNotAnnounced CheckStatus = "not-announced"
	// CheckNotRun: the check could not be made (Detail says why: the relay
	// refused the events it needs, asked for AUTH, the connection failed):
	// nothing can be concluded.
	CheckNotRun CheckStatus = "not-run"
	// CheckUnknown: no decisive answer (a wait ran out, the run was
	// cancelled): never a failure.
	CheckUnknown CheckStatus = "unknown"
)

// Check is the outcome of one conformance check against one relay. Every
// string that comes from the relay (in Detail and Evidence) is untrusted
// and unescaped: the report layer escapes it for its format.
type Check struct {
	// ID names the check, stable across versions ("req.multi-filter-union").
	ID string `json:"id"`
	// NIP is the NIP the check rests on (1 for NIP-01).
	NIP int `json:"nip"`
	// Level is the keyword of the sentence: "MUST", "SHOULD" or "MAY".
	Level string `json:"level"`
	// Sentence is the NIP text the check rests on, quoted exactly.
	Sentence string `json:"sentence"`
	// Status is how the check ended.
	Status CheckStatus `json:"status"`
	// Detail says in one line what was seen (what differed, why not run,
	// what was waited for); empty for a plain pass.
	Detail string `json:"detail,omitempty"`
	// Evidence is the messages sent ("> " + frame) and received ("< " +
	// frame), in order, each cut to a few hundred bytes, a few KB in all.
	Evidence []string `json:"evidence,omitempty"`
	// EvidenceCut: more was exchanged than Evidence holds.
	EvidenceCut bool `json:"evidence_cut,omitempty"`
	// Millis is how long the check took, in milliseconds.
	Millis int64 `json:"millis"`
}

// ConformanceFailed reports whether any check failed (a MUST violated).
func ConformanceFailed(checks []Check) bool {
	for _, c := range checks {
		if c.Status == CheckFail {
			return true
		}
	}
	return false
}
