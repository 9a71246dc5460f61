package workload

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/relaybench/relaybench/nostr"
)

// Query shapes, in the order they rotate: the reference suite's five (by
// kind, by time range, by tag, by author, complex) with the tag shape split
// into #p and #t.
var Shapes = []string{"kind", "time-range", "tag-p", "tag-t", "author", "complex"}

// shapeBuilder draws query filters from events the relay holds, so that every
// filter matches something (a filter that matches nothing measures nothing).
type shapeBuilder struct {
	rng    *rand.Rand
	evs    []*nostr.Event // source events (live model, or the corpus when nothing was published)
	limit  int
	pTags  []string
	tTags  []string
	minT   int64
	maxT   int64
	byKind []int
	cd     *clientData // the client shapes' data (clientmix.go), gathered on first use
}

func newShapeBuilder(evs []*nostr.Event, limit int, seed int64) (*shapeBuilder, error) {
	if len(evs) == 0 {
		return nil, fmt.Errorf("no events to build queries from: the corpus is empty or the relay accepted none of the published events")
	}
	b := &shapeBuilder{rng: rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)), evs: evs, limit: limit}
	seenP, seenT := map[string]bool{}, map[string]bool{}
	b.minT, b.maxT = evs[0].CreatedAt, evs[0].CreatedAt
	for _, e := range evs {
		b.byKind = append(b.byKind, e.Kind)
		if e.CreatedAt < b.minT {
			b.minT = e.CreatedAt
		}
		if e.CreatedAt > b.maxT {
			b.maxT = e.CreatedAt
		}
		for _, t := range e.Tags {
			if len(t) < 2 {
				continue
			}
			switch t[0] {
			case "p":
				if !seenP[t[1]] {
					seenP[t[1]] = true
					b.pTags = append(b.pTags, t[1])
				}
			case "t":
				if !seenT[t[1]] {
					seenT[t[1]] = true
					b.tTags = append(b.tTags, t[1])
				}
			}
		}
	}
	return b, nil
}

func (b *shapeBuilder) pick() *nostr.Event { return b.evs[b.rng.IntN(len(b.evs))] }

// tagOf returns a value of tag name from a randomly picked event that has one
// (popular values are drawn more often, as in real traffic), or "".
func (b *shapeBuilder) tagOf(name string, all []string) string {
	for range 64 {
		if v := b.pick().TagValue(name); v != "" {
			return v
		}
	}
	if len(all) > 0 {
		return all[b.rng.IntN(len(all))]
	}
	return ""
}

// build returns the filter for shape, and false when the corpus offers no
// way to make that shape match (e.g. no t tags at all).
func (b *shapeBuilder) build(shape string) (nostr.Filter, bool) {
	f := nostr.Filter{Limit: b.limit}
	switch shape {
	case "kind":
		f.Kinds = []int{b.byKind[b.rng.IntN(len(b.byKind))]}
	case "time-range":
		// One hour of events (the reference's "last hour"), anchored on a
		// real event so the window is never empty.
		e := b.pick()
		since := e.CreatedAt - int64(b.rng.IntN(3600))
		f.Since, f.Until = nostr.Int64(since), nostr.Int64(since+3600)
	case "tag-p":
		v := b.tagOf("p", b.pTags)
		if v == "" {
			return f, false
		}
		f.Tags = map[string][]string{"p": {v}}
	case "tag-t":
		v := b.tagOf("t", b.tTags)
		if v == "" {
			return f, false
		}
		f.Tags = map[string][]string{"t": {v}}
	case "author":
		f.Authors = []string{b.pick().PubKey}
	case "complex":
		// Several conditions at once, anchored on a real event e so that at
		// least e matches: its kind plus another, its author plus two others,
		// a time window around it and, when it has one, one of its t tags.
		e := b.pick()
		kinds := []int{e.Kind}
		if e.Kind != 1 {
			kinds = append(kinds, 1)
		} else {
			kinds = append(kinds, 7)
		}
		f.Kinds = kinds
		f.Authors = []string{e.PubKey}
		for range 8 {
			if len(f.Authors) == 3 {
				break
			}
			if a := b.pick().PubKey; !slices.Contains(f.Authors, a) {
				f.Authors = append(f.Authors, a)
			}
		}
		f.Since = nostr.Int64(e.CreatedAt - 6*3600)
		f.Until = nostr.Int64(e.CreatedAt + 6*3600)
		if t := e.TagValue("t"); t != "" {
			f.Tags = map[string][]string{"t": {t}}
		}
	default:
		return b.buildClient(shape)
	}
	return f, true
}
