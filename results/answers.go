package results

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// Answer is one query answer an execution segment recorded for relaybench
// merge: a segment's relay holds every segment's events, so the exact check
// of an answer needs all of them and happens at the merge. Only answers
// that ended with EOSE are recorded.
type Answer struct {
	Shape  string          `json:"shape"`
	Filter json.RawMessage `json:"filter"` // the REQ's (first) filter as sent
	// More are the REQ's other filters as sent, for a REQ of several (the
	// answer owes their union, each event once); absent for one filter.
	More []json.RawMessage `json:"more_filters,omitempty"`
	// SentNs and EOSENs are the REQ's write and its EOSE's read, wall clock
	// in unix nanoseconds: an event accepted after SentNs may or may not be
	// in the answer.
	SentNs int64 `json:"sent_ns"`
	EOSENs int64 `json:"eose_ns"`
	// IDs are the first IDPrefix bytes of the ids of the valid events of the
	// answer, in arrival order (duplicates and non-matching ones included:
	// the merge judges them), concatenated, base64.
	IDs string `json:"ids,omitempty"`
	// Invalid counts events that were malformed or had a wrong id or
	// signature (judged by the segment).
	Invalid int64 `json:"invalid,omitempty"`
}

// IDPrefix is how many bytes of an event id an Answer keeps: 8 bytes tell
// apart the events of any corpus relaybench can sign (a collision among 50
// million ids has odds below 1 in 10⁴).
const IDPrefix = 8

// EncodeIDs packs hex event ids as Answer.IDs. An id that is not hex is
// kept as its first bytes.
func EncodeIDs(ids []string) string {
	b := make([]byte, 0, len(ids)*IDPrefix)
	for _, id := range ids {
		b = append(b, idPrefix(id)...)
	}
	return base64.StdEncoding.EncodeToString(b)
}

func idPrefix(id string) []byte {
	var p [IDPrefix]byte
	if len(id) >= 2*IDPrefix {
		if _, err := hex.Decode(p[:], []byte(id[:2*IDPrefix])); err == nil {
			return p[:]
		}
	}
	copy(p[:], id)
	return p[:]
}

// IDKey is the key an id has in an Answer: its first IDPrefix bytes, as a
// string (for maps).
func IDKey(id string) string { return string(idPrefix(id)) }

// DecodeIDs unpacks Answer.IDs into id keys (IDKey).
func DecodeIDs(s string) ([]string, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("answer ids: %w", err)
	}
	if len(b)%IDPrefix != 0 {
		return nil, fmt.Errorf("answer ids: %d bytes, not a multiple of %d", len(b), IDPrefix)
	}
	out := make([]string, 0, len(b)/IDPrefix)
	for i := 0; i < len(b); i += IDPrefix {
		out = append(out, string(b[i:i+IDPrefix]))
	}
	return out, nil
}

// EncodeIndexSet packs a set of indexes below n as a bitmap (bit i%8 of
// byte i/8), base64: 10,000 corpus events take 1,668 characters.
func EncodeIndexSet(idx []int, n int) string {
	b := make([]byte, (n+7)/8)
	for _, i := range idx {
		if i >= 0 && i < n {
			b[i/8] |= 1 << (i % 8)
		}
	}
	return base64.StdEncoding.EncodeToString(b)
}

// DecodeIndexSet unpacks EncodeIndexSet's bitmap of n indexes.
func DecodeIndexSet(s string, n int) ([]bool, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("index set: %w", err)
	}
	if len(b) != (n+7)/8 {
		return nil, fmt.Errorf("index set of %d bytes for %d indexes", len(b), n)
	}
	out := make([]bool, n)
	for i := range out {
		out[i] = b[i/8]&(1<<(i%8)) != 0
	}
	return out, nil
}

// Merged describes a file relaybench merge made from segments' files.
type Merged struct {
	Segments int            `json:"segments"` // N
	Sources  []MergedSource `json:"sources"`  // one per segment, in segment order
	// StartSpreadNs is the spread (max − min) of the segments' actual
	// starts: start_at + start_late_ns − clock_offset_ns (0 when unknown).
	StartSpreadNs int64 `json:"start_spread_ns,omitempty"`
	// CrossChecked is true when every query answer was judged against all
	// segments' stored events (the corpus was rebuilt for it).
	CrossChecked bool     `json:"cross_checked"`
	Warnings     []string `json:"warnings,omitempty"`
	// Command is the merge's own command line as typed ("merge -o m.json
	// seg0.json seg1.json", "report --merge seg0.json seg1.json"); the
	// file's Args are the test's, the segments' command.
	Command []string `json:"command,omitempty"`
}

// MergedSource is one segment's results file in a merge.
type MergedSource struct {
	Segment    int       `json:"segment"`
	File       string    `json:"file"`
	Machine    Machine   `json:"machine"`
	Tool       Tool      `json:"tool"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Verdict    *Verdict  `json:"verdict,omitempty"`
}

// SegmentPart is one segment's share of a merged phase.
type SegmentPart struct {
	Segment       int        `json:"segment"`
	Host          string     `json:"host,omitempty"`
	Start         time.Time  `json:"start"`
	Duration      int64      `json:"duration_ns"`
	Resources     *Resources `json:"resources,omitempty"`
	ClientLimited bool       `json:"client_limited,omitempty"`
	// RelayMetrics is the segment's own Phase.RelayMetrics (the relay's
	// metrics over this segment's window).
	RelayMetrics map[string]float64 `json:"relay_metrics,omitempty"`
}
