package workload

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/nostr"
)

// FreshSpec describes events to sign before a live workload's clock starts.
type FreshSpec struct {
	Count int   // number of events
	Size  int   // content size in bytes (exact, via corpus.Content)
	Kind  int   // event kind (default 1)
	Seed  int64 // drives the content
	// Authors is how many corpus keys sign the events (event i is signed by
	// corpus author i mod Authors); default min(50, corpus authors).
	Authors int
	// Channels: event i carries the tag ["t", Channels[i mod len]]; none when empty.
	Channels []string
	// CreatedAt is the events' created_at (default: the current time).
	CreatedAt int64
}

// Fresh is a set of pre-signed events never seen by any relay: ids are
// unique per call (a random run nonce is in the tags), created_at is now.
type Fresh struct {
	Events  []*nostr.Event
	Raw     [][]byte // compact wire JSON of Events[i]
	Bytes   int64    // total of Raw
	Authors []string // the public keys that signed, author i signs events i mod len
	Nonce   string   // the run nonce carried in each event's "rb" tag
	// SignDuration is how long building and signing took (before any clock).
	SignDuration time.Duration
	ids          map[string]int32
}

// RunNonce returns 8 random hex characters naming one run, so that channel
// tags and events of a run are distinct from every earlier run's.
func RunNonce() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ChannelNames returns n channel tag values "rbch-<seed>-<nonce>-<i>".
func ChannelNames(seed int64, nonce string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("rbch-%d-%s-%d", seed, nonce, i)
	}
	return out
}

// NewFresh builds and signs the events of s with the corpus keys (in
// parallel, on every core). Call it before the timed window.
func NewFresh(ctx context.Context, c *corpus.Corpus, s FreshSpec, nonce string) (*Fresh, error) {
	if s.Count <= 0 {
		return nil, fmt.Errorf("fresh events: count must be positive, got %d", s.Count)
	}
	if c == nil || len(c.Authors) == 0 {
		return nil, fmt.Errorf("fresh events: the corpus has no keys")
	}
	if s.Kind == 0 {
		s.Kind = 1
	}
	if s.Authors <= 0 {
		s.Authors = min(50, len(c.Authors))
	}
	s.Authors = min(s.Authors, len(c.Authors))
	if s.CreatedAt == 0 {
		s.CreatedAt = time.Now().Unix()
	}
	if nonce == "" {
		nonce = RunNonce()
	}
	t0 := time.Now()
	rng := corpus.NewRand(s.Seed, 0x6c697665) // "live"
	evs := make([]*nostr.Event, s.Count)
	keys := make([]*corpus.Author, s.Count)
	for i := range evs {
		tags := []nostr.Tag{{"rb", nonce}}
		if len(s.Channels) > 0 {
			tags = append(tags, nostr.Tag{"t", s.Channels[i%len(s.Channels)]})
		}
		evs[i] = &nostr.Event{CreatedAt: s.CreatedAt, Kind: s.Kind, Tags: tags, Content: corpus.Content(rng, s.Size)}
		keys[i] = c.Author(i % s.Authors)
		if i%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if err := corpus.SignEvents(ctx, evs, keys, corpus.Options{}); err != nil {
		return nil, err
	}
	f := &Fresh{Events: evs, Raw: make([][]byte, len(evs)), Nonce: nonce, ids: make(map[string]int32, len(evs))}
	for i, e := range evs {
		f.Raw[i] = e.AppendJSON(make([]byte, 0, s.Size+400))
		f.Bytes += int64(len(f.Raw[i]))
		f.ids[e.ID] = int32(i)
	}
	for i := 0; i < s.Authors; i++ {
		f.Authors = append(f.Authors, c.Author(i).PubKey)
	}
	f.SignDuration = time.Since(t0)
	return f, nil
}

// Index returns the number of the fresh event whose wire JSON is raw, by
// its id alone (no parsing, no allocation); false for any other event.
func (f *Fresh) Index(raw []byte) (int, bool) {
	id := EventIDOf(raw)
	if id == nil {
		return 0, false
	}
	n, ok := f.ids[string(id)]
	return int(n), ok
}

// IndexOf returns the number of the fresh event with this id.
func (f *Fresh) IndexOf(id string) (int, bool) {
	n, ok := f.ids[id]
	return int(n), ok
}

var idKey = []byte(`"id"`)

// EventIDOf returns the 64 hex characters of the "id" field of an event's
// JSON object without parsing it, or nil. A quoted "id" can only be a key
// or a whole string value (quotes inside strings are escaped), and only the
// key is followed by ':'.
func EventIDOf(raw []byte) []byte {
	i := 0
	for {
		j := bytes.Index(raw[i:], idKey)
		if j < 0 {
			return nil
		}
		k := i + j + len(idKey)
		for k < len(raw) && isSpace(raw[k]) {
			k++
		}
		if k < len(raw) && raw[k] == ':' {
			k++
			for k < len(raw) && isSpace(raw[k]) {
				k++
			}
			if k+65 < len(raw) && raw[k] == '"' && raw[k+65] == '"' {
				return raw[k+1 : k+65]
			}
			return nil
		}
		i = k
	}
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// Undecided reports whether an EVENT with outcome o was sent without a
// decisive answer (its OK timed out, its connection was lost, the run was
// cancelled before it came): the relay may or may not have stored it, so it
// is neither owed nor forbidden in any later answer (see
// verify.NewModelUnknown).
func Undecided(o Outcome) bool { return o == TimedOut || o == Failed || o == Cancelled }
