package verify

import (
	"slices"
	"strconv"
	"strings"

	"github.com/relaybench/relaybench/nostr"
)

// Grid is the state of many indexed streams over one known list of events
// (the subscribers of a live fan-out, each receiving the events
// relaybench publishes): which events each stream has seen, laid out
// event by event (one byte per stream in event k's row), and whether each
// known event matches each distinct filter, worked out once. A delivery of
// event k then touches row k, which stays in the cache while the event
// fans out, instead of a line of its own stream's state; the checks are
// the same as an indexed stream's (NewIndexedStream).
//
// Each stream (column) is used by one goroutine at a time, as any Stream;
// different columns may be used concurrently.
type Grid struct {
	cols  int
	n     int
	seen  []byte   // seen[k*cols+col]: 1 once stream col saw known event k
	match [][]bool // match[group][k]: known event k matches the group's filter
	known []*nostr.Event
	group map[string]int32 // filterKey → the filter's match row
}

// NewGrid makes the state of cols streams over the known list. (A stream
// of NewIndexedStream is alone on a grid without the list: its filter is
// then checked on each event.)
func (c *Checker) NewGrid(known []*nostr.Event, cols int) *Grid {
	return &Grid{cols: cols, n: len(known), seen: make([]byte, len(known)*cols), known: known, group: map[string]int32{}}
}

// Stream returns column col's stream checking an answer to f (nil: any
// event matches). Streams with equal filters share one match row.
func (g *Grid) Stream(c *Checker, f *nostr.Filter, col int) Stream {
	s := Stream{Filter: f, seen: map[string]struct{}{}, c: c, grid: g, col: int32(col), group: -1}
	if f == nil || g.known == nil {
		return s
	}
	key := filterKey(f)
	grp, ok := g.group[key]
	if !ok {
		row := make([]bool, g.n)
		for k, e := range g.known {
			row[k] = f.Matches(e)
		}
		grp = int32(len(g.match))
		g.match = append(g.match, row)
		g.group[key] = grp
	}
	s.group = grp
	return s
}

// gridMatches is whether known event k matches s's filter (s on a grid).
func (s *Stream) gridMatches(e *nostr.Event, k int) bool {
	if s.Filter == nil {
		return true
	}
	if s.group < 0 {
		return s.Filter.Matches(e)
	}
	return s.grid.match[s.group][k]
}

// gridSeen marks known event k seen by s and reports whether it was before.
func (s *Stream) gridSeen(k int) bool {
	p := &s.grid.seen[k*s.grid.cols+int(s.col)]
	was := *p != 0
	*p = 1
	return was
}

// filterKey is f's conditions written out exactly (strings quoted byte for
// byte, tags by name, since and until by value): two filters with the
// same key match the same events. (Not JSON: JSON writes every invalid
// UTF-8 byte as U+FFFD, and Matches compares the bytes.)
func filterKey(f *nostr.Filter) string {
	var b strings.Builder
	strs := func(ss []string) {
		b.WriteString(strconv.Itoa(len(ss)))
		for _, s := range ss {
			b.WriteString(strconv.Quote(s))
		}
		b.WriteByte(';')
	}
	strs(f.IDs)
	strs(f.Authors)
	for _, k := range f.Kinds {
		b.WriteString(strconv.Itoa(k))
		b.WriteByte(',')
	}
	b.WriteByte(';')
	names := make([]string, 0, len(f.Tags))
	for name := range f.Tags {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		b.WriteString(strconv.Quote(name))
		strs(f.Tags[name])
	}
	b.WriteByte(';')
	for _, t := range []*int64{f.Since, f.Until} {
		if t != nil {
			b.WriteString(strconv.FormatInt(*t, 10))
		}
		b.WriteByte(';')
	}
	b.WriteString(strconv.Itoa(f.Limit))
	b.WriteString(strconv.Quote(f.Search))
	return b.String()
}
