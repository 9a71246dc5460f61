// Package corpus builds the events relaybench publishes: realistic,
// deterministic and really signed Nostr events, generated on all cores and
// cached on disk.
//
// A corpus is a pure function of its Params: the same Params give
// byte-identical events, ids and signatures, whichever signing backend is
// used (both produce the exact BIP-340 signature). Events mix kinds 1, 0, 3,
// 6, 7 and 30023 by many authors with skewed activity; their p, e and t tags
// point at the corpus itself so tag queries return results; content mixes
// scripts, emoji, quotes and newlines so JSON escaping is exercised.
package corpus

import (
	"strconv"
	"time"

	"github.com/relaybench/relaybench/internal/secp"
	"github.com/relaybench/relaybench/nostr"
)

// Author is one key of the corpus.
type Author struct {
	// PubKey is the lower-case hex x-only public key.
	PubKey string
	// Secret is the secret key.
	Secret [32]byte
}

// Corpus is a generated (or cached) set of signed events.
type Corpus struct {
	// Params are the parameters the corpus was made from, defaults applied.
	Params Params
	// Key is Params.Key(): it names the cache file.
	Key string
	// Events in generation order, which is the publish order. Events must
	// not be modified: Raw and the cache hold the same data. Nil for a
	// streamed corpus (Streamed: more than Options.StreamAbove events):
	// use Len, RawAt, IDAt, SizeAt and EventAt, which work for every
	// corpus, or Materialize.
	Events []*nostr.Event
	// Raw[i] is the compact wire JSON of Events[i] (nostr.Event.AppendJSON).
	// For a corpus read from its cache file it slices the file's read-only
	// mapping. Nil for a streamed corpus.
	Raw [][]byte
	// Authors are the corpus keys; every event is signed by one of them.
	Authors []Author
	// Bytes is the total size of Raw.
	Bytes int64
	// Cached is true when the corpus was read from the cache (nothing was
	// signed).
	Cached bool
	// SignDuration is the wall time spent generating and signing (zero when
	// Cached).
	SignDuration time.Duration
	// Signer is the backend that signed the events (for a cached corpus, the
	// one that signed them when the cache was written).
	Signer string
	// CacheNote says, in one line, why the cache was not used or could not
	// be written ("" when the cache worked or was disabled).
	CacheNote string
	// Manifest describes a corpus read from a dump (LoadDump): its source,
	// what preparation dropped and its fingerprint. Nil for a generated
	// corpus, whose Authors sign its events; a dump corpus's Authors are
	// synthetic keys that only sign fresh events for live workloads.
	Manifest *Manifest

	store   *store            // the mapped corpus file (nil: held in memory only)
	pubkeys map[string]string // the authors' pubkeys, shared by parsed events
}

// Author returns author i modulo the number of authors, e.g. to sign fresh
// events for live workloads with the corpus keys.
func (c *Corpus) Author(i int) *Author {
	n := len(c.Authors)
	return &c.Authors[((i%n)+n)%n]
}

// Replaced reports, for each event, whether a later event of the corpus
// replaces it under NIP-01 (same author and kind for replaceable kinds 0, 3
// and 10000–19999; same author, kind and d tag for 30000–39999; newest
// created_at wins, ties to the lowest id). A relay that stores the whole
// corpus keeps only the events for which Replaced is false.
func (c *Corpus) Replaced() []bool {
	out := make([]bool, c.Len())
	latest := map[string]int{}
	type stamp struct {
		at int64
		id string
	}
	stamps := map[int]stamp{}
	_ = c.Scan(func(i int, e *nostr.Event) error {
		k := replaceKey(e)
		if k == "" {
			return nil
		}
		j, ok := latest[k]
		if !ok {
			latest[k] = i
			stamps[i] = stamp{e.CreatedAt, e.ID}
			return nil
		}
		o := stamps[j]
		if e.CreatedAt > o.at || (e.CreatedAt == o.at && e.ID < o.id) {
			out[j] = true
			delete(stamps, j)
			latest[k] = i
			stamps[i] = stamp{e.CreatedAt, e.ID}
		} else {
			out[i] = true
		}
		return nil
	})
	return out
}

// replaceKey is the NIP-01 replacement key of e, or "" for regular events.
func replaceKey(e *nostr.Event) string {
	k := e.Kind
	switch {
	case k == 0 || k == 3 || (k >= 10000 && k < 20000):
		return e.PubKey + ":" + strconv.Itoa(k)
	case k >= 30000 && k < 40000:
		return e.PubKey + ":" + strconv.Itoa(k) + ":" + e.TagValue("d")
	}
	return ""
}

// Options control how a corpus is produced.
type Options struct {
	// CacheDir holds cached corpora: "" means
	// $XDG_CACHE_HOME/relaybench/corpus (or ~/.cache/relaybench/corpus);
	// "off" disables the cache.
	CacheDir string
	// Workers is the number of signing goroutines (0 means GOMAXPROCS).
	Workers int
	// Progress, if set, is called after each batch of events is signed with
	// the number done and the total. Calls are serialized and must be quick.
	Progress func(done, total int)
	// Signer overrides the signing backend (nil means secp.FromEnv: the
	// RELAYBENCH_SIGNER choice, else libsecp256k1 when it loads, else btcec).
	Signer secp.Signer
	// StreamAbove is the most events a corpus holds in memory (Events and
	// Raw filled): a bigger one is streamed from its file, which generation
	// writes as it signs (see Corpus.Streamed). 0 means DefaultStreamAbove;
	// negative streams every corpus.
	StreamAbove int
}

func (o Options) streams(n int) bool {
	switch {
	case o.StreamAbove < 0:
		return true
	case o.StreamAbove == 0:
		return n > DefaultStreamAbove
	}
	return n > o.StreamAbove
}

func (o Options) signer() (secp.Signer, error) {
	if o.Signer != nil {
		return o.Signer, nil
	}
	return secp.FromEnv()
}
