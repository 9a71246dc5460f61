package corpus

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"time"
)

// FormatVersion changes whenever generation or the cache format changes, so
// that a cache written by another version is never mistaken for this one.
const FormatVersion = 1

// Limits enforced by Validate.
const (
	MaxEvents  = 50_000_000
	MaxAuthors = 1_000_000
	MaxAvgSize = 16 << 20
	MaxSpread  = 3.0
)

// Params describe a corpus. The same Params (after WithDefaults) always give
// byte-identical events, ids and signatures.
type Params struct {
	// Seed selects the corpus; any value, 0 included.
	Seed int64
	// Events is the number of events (default 10,000).
	Events int
	// Authors is the number of distinct keys (default 200). Activity is
	// skewed: a few authors write much of the corpus.
	Authors int
	// AvgSize is the target average content size in bytes (default 1024).
	AvgSize int
	// Spread is the sigma of the log-normal content-size distribution
	// (DefaultParams uses 0.6; sizes are clamped to [AvgSize/8, 4·AvgSize]).
	// 0 means exact size: every event is a kind-1 note whose content is
	// exactly AvgSize bytes, for payload sweeps.
	Spread float64
	// Window is how far back created_at goes (default 24h).
	Window time.Duration
	// Anchor is the end of the created_at window, unix seconds (default: now
	// truncated to the hour, so a corpus is stable within the hour and never
	// dated in the future). Events fall in [Anchor-Window, Anchor].
	Anchor int64
}

// Default values applied by WithDefaults.
const (
	DefaultEvents  = 10_000
	DefaultAuthors = 200
	DefaultAvgSize = 1024
	DefaultSpread  = 0.6
	DefaultWindow  = 24 * time.Hour
)

// DefaultParams returns the default corpus: 10,000 events by 200 authors,
// 1 KB average content with a log-normal spread of 0.6, over the 24 hours
// before the current hour.
func DefaultParams() Params {
	return Params{Spread: DefaultSpread}.WithDefaults()
}

// WithDefaults returns p with zero Events, Authors, AvgSize, Window and
// Anchor replaced by their defaults. Seed and Spread are kept as they are
// (zero is meaningful for both).
func (p Params) WithDefaults() Params {
	p.Events = cmp.Or(p.Events, DefaultEvents)
	p.Authors = cmp.Or(p.Authors, DefaultAuthors)
	p.AvgSize = cmp.Or(p.AvgSize, DefaultAvgSize)
	p.Window = cmp.Or(p.Window, DefaultWindow)
	if p.Anchor == 0 {
		p.Anchor = time.Now().Truncate(time.Hour).Unix()
	}
	return p
}

// Validate reports the first bad field as a one-line error.
func (p Params) Validate() error {
	switch {
	case p.Events < 1 || p.Events > MaxEvents:
		return fmt.Errorf("corpus: events must be between 1 and %d, got %d", MaxEvents, p.Events)
	case p.Authors < 1 || p.Authors > MaxAuthors:
		return fmt.Errorf("corpus: authors must be between 1 and %d, got %d", MaxAuthors, p.Authors)
	case p.AvgSize < 1 || p.AvgSize > MaxAvgSize:
		return fmt.Errorf("corpus: avg size must be between 1 and %d bytes, got %d", MaxAvgSize, p.AvgSize)
	case math.IsNaN(p.Spread) || p.Spread < 0 || p.Spread > MaxSpread:
		return fmt.Errorf("corpus: spread must be between 0 and %g, got %g", MaxSpread, p.Spread)
	case p.Window < time.Second:
		return fmt.Errorf("corpus: window must be at least 1s, got %s", p.Window)
	case p.Anchor <= 0:
		return fmt.Errorf("corpus: anchor must be a positive unix time, got %d", p.Anchor)
	case p.Anchor-int64(p.Window/time.Second) < 0:
		return fmt.Errorf("corpus: window %s reaches before 1970 from anchor %d", p.Window, p.Anchor)
	case p.Anchor > time.Now().Unix():
		return fmt.Errorf("corpus: anchor %d is in the future", p.Anchor)
	}
	return nil
}

// Key identifies the corpus these Params (taken as given; apply
// WithDefaults first) produce: the hex of a hash of the parameters and
// FormatVersion. It names the cache file.
func (p Params) Key() string {
	var b []byte
	b = append(b, "relaybench-corpus"...)
	for _, v := range []int64{FormatVersion, p.Seed, int64(p.Events), int64(p.Authors), int64(p.AvgSize),
		int64(math.Float64bits(p.Spread)), int64(p.Window / time.Second), p.Anchor} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

// windowStart is the earliest created_at.
func (p Params) windowStart() int64 { return p.Anchor - int64(p.Window/time.Second) }
