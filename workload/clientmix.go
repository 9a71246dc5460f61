package workload

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/wire"
)

// ClientShapes are the queries Nostr clients send, in the order they
// rotate. Each is drawn from the events the relay holds so that it hits:
//
//   - global: the global feed, recent kind-1 notes
//   - home: the home feed, kinds 1 and 6 by the authors of a kind-3 follow
//     list (one of the 8 lists closest to 150 authors, cut at 150), and in
//     the same REQ the notes of the hashtags the user follows (#t, kind 1:
//     the 3 t values those authors' notes carry most), as Damus's home
//     feed sends them; a note by a followed author with a followed tag
//     matches both filters
//   - profiles: profile hydration, kind 0 of 50 authors that have one
//   - thread: a popular root the corpus holds and its replies in one REQ,
//     as clients open a thread: {"ids":[root]} and {"#e":[root],"kinds":[1]}
//   - notifications: what mentions one of the most-mentioned keys (#p,
//     kinds 1, 6, 7 and 9735)
//   - hashtag: a hashtag feed (#t, kind 1), tags drawn by how often notes
//     carry them
//   - ids: a batch of 100 events by id
//   - reactions: reactions and zaps of a much-reacted note (#e, kinds 7 and
//     9735)
//   - addressable: one addressable event by kind, author and d tag
//
// "Popular" picks favour the top of the ranking among its 32 first entries.
var ClientShapes = []string{"global", "home", "profiles", "thread", "notifications", "hashtag", "ids", "reactions", "addressable"}

// The query mixes --query-mix names.
const (
	MixReference = "reference" // the reference suite's Shapes
	MixClients   = "clients"   // ClientShapes
	MixAll       = "all"       // both
)

// Client shape sizes.
const (
	homeAuthors    = 150
	profileAuthors = 50
	batchIDs       = 100
	popularTop     = 32
)

// ParseMix resolves a query mix: "reference", "clients", "all", or a
// comma-separated list of shape names (reference or client ones).
func ParseMix(s string) ([]string, error) {
	switch strings.TrimSpace(s) {
	case "", MixReference:
		return slices.Clone(Shapes), nil
	case MixClients:
		return slices.Clone(ClientShapes), nil
	case MixAll:
		return append(slices.Clone(Shapes), ClientShapes...), nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !slices.Contains(Shapes, p) && !slices.Contains(ClientShapes, p) {
			return nil, fmt.Errorf("unknown query shape %q (mixes: reference, clients, all; shapes: %s, %s)", p, strings.Join(Shapes, ", "), strings.Join(ClientShapes, ", "))
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no query shape given")
	}
	return out, nil
}

// clientData is what the client shapes are drawn from, gathered once from
// the source events.
type clientData struct {
	notes       int                 // kind-1 events
	follows     [][]string          // follow lists (kind 3) whose authors posted, closest to homeAuthors first
	profiled    []string            // authors with a kind-0 event
	roots       []string            // thread roots, most replied first
	heldRoots   []string            // roots the events hold, most replied first
	authorTags  map[string][]string // t values of each author's kind-1 notes, one per occurrence
	mentioned   []string            // keys, most mentioned first
	noteTags    []string            // t values of kind-1 notes, one per occurrence
	ids         []string            // every event id
	reacted     []string            // notes, most reacted (kinds 7, 9735) first
	addressable []*nostr.Event      // kind 30000–39999 with a d tag
	why         map[string]string   // shape → why it cannot hit
}

// clientSkipWhy says, per client shape, what a corpus lacks when the shape
// cannot hit.
var clientSkipWhy = map[string]string{
	"global":        "corpus has no kind-1 event",
	"home":          "corpus has no kind-3 event following an author who posted",
	"profiles":      "corpus has no kind-0 event",
	"thread":        "corpus has no reply (kind 1 with an e tag)",
	"notifications": "corpus has no p tag on kinds 1, 6, 7 or 9735",
	"hashtag":       "corpus has no kind-1 event with a t tag",
	"ids":           "corpus has no event id",
	"reactions":     "corpus has no reaction or zap (kind 7 or 9735 with an e tag)",
	"addressable":   "corpus has no addressable event (kind 30000-39999 with a d tag)",
}

// isHex64 reports whether s is 64 lowercase hex digits (an id or a key, as
// filters must carry them).
func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func newClientData(evs []*nostr.Event) *clientData {
	d := &clientData{why: map[string]string{}, authorTags: map[string][]string{}}
	sc := &clientScan{posted: map[string]bool{}, seenProfile: map[string]bool{},
		roots: map[string]int{}, mentions: map[string]int{}, reactions: map[string]int{}}
	for _, e := range evs {
		sc.event(d, e)
	}
	d.roots, d.mentioned, d.reacted = outcome.MostFirst(sc.roots), outcome.MostFirst(sc.mentions), outcome.MostFirst(sc.reactions)
	held := make(map[string]bool, len(d.ids))
	for _, id := range d.ids {
		held[id] = true
	}
	for _, r := range d.roots {
		if held[r] {
			d.heldRoots = append(d.heldRoots, r)
		}
	}
	d.homeLists(sc.contacts, sc.posted)
	for shape, missing := range map[string]bool{
		"global": d.notes == 0, "home": len(d.follows) == 0, "profiles": len(d.profiled) == 0,
		"thread": len(d.roots) == 0, "notifications": len(d.mentioned) == 0, "hashtag": len(d.noteTags) == 0,
		"ids": len(d.ids) == 0, "reactions": len(d.reacted) == 0, "addressable": len(d.addressable) == 0,
	} {
		if missing {
			d.why[shape] = clientSkipWhy[shape]
		}
	}
	return d
}

// clientScan is what newClientData gathers from the events before ranking.
type clientScan struct {
	posted      map[string]bool // authors of kind 1 or 6
	seenProfile map[string]bool
	roots       map[string]int
	mentions    map[string]int
	reactions   map[string]int
	contacts    []*nostr.Event
}

// event reads one event into d and sc.
func (sc *clientScan) event(d *clientData, e *nostr.Event) {
	if isHex64(e.ID) {
		d.ids = append(d.ids, e.ID)
	}
	switch {
	case e.Kind == 1 || e.Kind == 6:
		sc.posted[e.PubKey] = true
	case e.Kind == 0:
		if !sc.seenProfile[e.PubKey] && isHex64(e.PubKey) {
			sc.seenProfile[e.PubKey] = true
			d.profiled = append(d.profiled, e.PubKey)
		}
	case e.Kind == 3:
		sc.contacts = append(sc.contacts, e)
	case e.Kind >= 30000 && e.Kind < 40000:
		if e.TagValue("d") != "" && isHex64(e.PubKey) {
			d.addressable = append(d.addressable, e)
		}
	}
	if e.Kind == 1 {
		d.notes++
		if r := threadRoot(e); r != "" {
			sc.roots[r]++
		}
	}
	var lastE string
	for _, t := range e.Tags {
		if len(t) < 2 {
			continue
		}
		switch t[0] {
		case "p":
			if (e.Kind == 1 || e.Kind == 6 || e.Kind == 7 || e.Kind == 9735) && isHex64(t[1]) {
				sc.mentions[t[1]]++
			}
		case "t":
			if e.Kind == 1 && t[1] != "" {
				d.noteTags = append(d.noteTags, t[1])
				d.authorTags[e.PubKey] = append(d.authorTags[e.PubKey], t[1])
			}
		case "e":
			if isHex64(t[1]) {
				lastE = t[1]
			}
		}
	}
	if (e.Kind == 7 || e.Kind == 9735) && lastE != "" {
		sc.reactions[lastE]++ // NIP-25: the reacted-to note is the last e tag
	}
}

// homeLists keeps the contact lists that follow someone who posted, those
// closest to homeAuthors authors first.
func (d *clientData) homeLists(contacts []*nostr.Event, posted map[string]bool) {
	for _, c := range contacts {
		var list []string
		hits := false
		for _, t := range c.Tags {
			if len(t) >= 2 && t[0] == "p" && isHex64(t[1]) && !slices.Contains(list, t[1]) {
				list = append(list, t[1])
				hits = hits || posted[t[1]]
			}
		}
		if hits {
			d.follows = append(d.follows, list)
		}
	}
	dist := func(l []string) int {
		if n := len(l) - homeAuthors; n > 0 {
			return n
		}
		return homeAuthors - len(l)
	}
	sort.SliceStable(d.follows, func(i, j int) bool { return dist(d.follows[i]) < dist(d.follows[j]) })
}

// threadRoot is the root a kind-1 reply belongs to: its e tag marked
// "root", or else (deprecated positional e tags) its first e tag; "" for a
// note that replies to nothing.
func threadRoot(e *nostr.Event) string {
	first := ""
	for _, t := range e.Tags {
		if len(t) < 2 || t[0] != "e" || !isHex64(t[1]) {
			continue
		}
		if len(t) >= 4 && t[3] == "root" {
			return t[1]
		}
		if first == "" && (len(t) < 4 || t[3] == "") {
			first = t[1]
		}
	}
	return first
}

// clients returns the data of the client shapes, gathered on first use.
func (b *shapeBuilder) clients() *clientData {
	if b.cd == nil {
		b.cd = newClientData(b.evs)
	}
	return b.cd
}

// popular picks from the first popularTop entries of a ranking, favouring
// the top (index n·u², u uniform in [0,1)).
func (b *shapeBuilder) popular(list []string) string {
	n := min(len(list), popularTop)
	u := b.rng.Float64()
	return list[int(float64(n)*u*u)]
}

// unavailable says why shape cannot be drawn from the source events ("" if
// it can).
func (b *shapeBuilder) unavailable(shape string) string {
	if !slices.Contains(ClientShapes, shape) {
		if shape == "tag-p" && len(b.pTags) == 0 {
			return "corpus has no p tag"
		}
		if shape == "tag-t" && len(b.tTags) == 0 {
			return "corpus has no t tag"
		}
		return ""
	}
	return b.clients().why[shape]
}

// buildClient returns the filter of a client shape, false when the source
// events cannot make it hit.
func (b *shapeBuilder) buildClient(shape string) (nostr.Filter, bool) {
	d := b.clients()
	f := nostr.Filter{Limit: b.limit}
	if d.why[shape] != "" {
		return f, false
	}
	switch shape {
	case "global":
		f.Kinds = []int{1}
	case "home":
		// One of the 8 follow lists closest to homeAuthors authors.
		l := d.follows[b.rng.IntN(min(len(d.follows), 8))]
		f.Kinds = []int{1, 6}
		f.Authors = slices.Clone(l[:min(len(l), homeAuthors)])
	case "profiles":
		f.Kinds = []int{0}
		f.Authors = b.sample(d.profiled, profileAuthors)
		f.Limit = len(f.Authors)
	case "thread":
		roots := d.heldRoots
		if len(roots) == 0 {
			roots = d.roots // no root held: its replies alone
		}
		f.Kinds = []int{1}
		f.Tags = map[string][]string{"e": {b.popular(roots)}}
	case "notifications":
		f.Kinds = []int{1, 6, 7, 9735}
		f.Tags = map[string][]string{"p": {b.popular(d.mentioned)}}
	case "hashtag":
		f.Kinds = []int{1}
		f.Tags = map[string][]string{"t": {d.noteTags[b.rng.IntN(len(d.noteTags))]}}
	case "ids":
		f.IDs = b.sample(d.ids, batchIDs)
		f.Limit = len(f.IDs)
	case "reactions":
		f.Kinds = []int{7, 9735}
		f.Tags = map[string][]string{"e": {b.popular(d.reacted)}}
	case "addressable":
		e := d.addressable[b.rng.IntN(len(d.addressable))]
		f.Kinds = []int{e.Kind}
		f.Authors = []string{e.PubKey}
		f.Tags = map[string][]string{"d": {e.TagValue("d")}}
		f.Limit = 1
	default:
		return f, false
	}
	return f, true
}

// sample returns n distinct values of list drawn at random (all of them,
// shuffled, when it has n or fewer).
func (b *shapeBuilder) sample(list []string, n int) []string {
	if len(list) <= n {
		out := slices.Clone(list)
		b.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		return out
	}
	picked := make(map[int]bool, n)
	out := make([]string, 0, n)
	for len(out) < n {
		k := b.rng.IntN(len(list))
		if !picked[k] {
			picked[k] = true
			out = append(out, list[k])
		}
	}
	return out
}

// followedTags is how many hashtags the home shape's user follows.
const followedTags = 3

// buildReq returns the filters of one REQ of shape: build's filter and,
// for the client shapes clients send as several filters (thread, home),
// the others, each drawn so that it hits; false when build's is false.
func (b *shapeBuilder) buildReq(shape string) ([]nostr.Filter, bool) {
	f, ok := b.build(shape)
	if !ok {
		return nil, false
	}
	fs := []nostr.Filter{f}
	switch shape {
	case "thread":
		if root := f.Tags["e"][0]; slices.Contains(b.clients().heldRoots, root) {
			fs = []nostr.Filter{{IDs: []string{root}, Limit: 1}, f}
		}
	case "home":
		if tags := b.clients().followedTags(f.Authors); len(tags) > 0 {
			fs = append(fs, nostr.Filter{Kinds: []int{1}, Tags: map[string][]string{"t": tags}, Limit: b.limit})
		}
	}
	return fs, true
}

// followedTags are the t values the kind-1 notes of authors carry most
// (at most followedTags of them, ties by value): hashtags the user follows
// that some followed author's note carries.
func (d *clientData) followedTags(authors []string) []string {
	counts := map[string]int{}
	for _, a := range authors {
		for _, t := range d.authorTags[a] {
			counts[t]++
		}
	}
	r := outcome.MostFirst(counts)
	return r[:min(len(r), followedTags)]
}

// sentReplace is NIP-01's sentence on a REQ under an open subscription id.
const sentReplace = "a new subscription is created, replacing the old one"

// clientIDs are a query connection's subscription ids (subIDs) used as
// clients use them, keeping a view open: a REQ of a client shape answered
// with EOSE stays open, and the connection's next REQ of a client shape is
// sent under its id while it is open, replacing it (NIP-01: "a new
// subscription is created, replacing the old one"), as a client does when
// its user turns a column to another feed, thread or profile; that one is
// closed once answered. So every other REQ of the client shapes replaces
// an open subscription. A reference shape's REQ, or a redialled
// connection, closes the open one first.
type clientIDs struct {
	subIDs
	open    *wire.Sub      // the subscription left open (nil: none)
	on      *wire.Conn     // the connection it is open on
	key     string         // the shape whose id it has
	filters []nostr.Filter // its REQ's filters
	model   *verify.Model  // the events accepted before the phase (nil: none known)
}

// query sends r's REQ on cn under the id clientIDs gives it and returns
// its answer, what the replaced subscription may have sent set aside
// (setAside).
func (s *clientIDs) query(ctx context.Context, cn *wire.Conn, r *queryRecord) (wire.QueryResult, error) {
	client := slices.Contains(ClientShapes, r.shape)
	if s.open != nil && (s.on != cn || !client) {
		s.open.Close()
		s.open = nil
	}
	if s.open != nil { // replace it
		id, key := s.open.ID(), s.key
		r.replaced, s.open = s.filters, nil
		qr, _, err := cn.QueryOpen(ctx, id, r.req(), false)
		s.ended(key, qr.Ended)
		r.setAside(&qr, s.model)
		return qr, err
	}
	id := s.next(r.shape)
	if !client {
		qr, err := cn.Query(ctx, id, r.req())
		s.ended(r.shape, qr.Ended)
		return qr, err
	}
	qr, sub, err := cn.QueryOpen(ctx, id, r.req(), true)
	s.ended(r.shape, qr.Ended)
	if sub != nil {
		s.open, s.on, s.key, s.filters = sub, cn, r.shape, r.req()
	}
	return qr, err
}

// setAside takes out of the complete answer to a REQ that replaced an
// open subscription what that subscription may have sent live before the
// relay read the REQ (the stream is ordered, but the client cannot see
// where one ends): an event matching one of the replaced REQ's filters and
// none of this REQ's, and the second copy of one matching both. Neither is
// owed to this REQ nor wrong; r.aside counts them (returned, not judged).
// An event model holds as accepted before the phase is not new to the
// relay, so never the old subscription's live delivery ("Any new events it
// receives"): it stays, and the verifier judges it (not matching,
// duplicated). An event that does not parse stays too.
func (r *queryRecord) setAside(qr *wire.QueryResult, model *verify.Model) {
	if len(r.replaced) == 0 || qr.Ended != wire.EndEOSE {
		return
	}
	own := r.req()
	copies := map[string]int{} // copies seen of an event matching both
	kept := qr.Events[:0]
	for _, raw := range qr.Events {
		e, err := nostr.ParseEvent(raw)
		switch {
		case err != nil || !matchesOne(r.replaced, e) || heldBefore(model, e.ID):
			kept = append(kept, raw)
		case !matchesOne(own, e):
			r.aside++
		case copies[e.ID] == 1: // the second copy: one may be the old subscription's
			copies[e.ID] = 2
			r.aside++
		default: // the first, or a third (a duplicate the verifier counts)
			copies[e.ID]++
			kept = append(kept, raw)
		}
	}
	qr.Events = kept
}

// heldBefore reports whether model holds id as accepted (before the phase).
func heldBefore(model *verify.Model, id string) bool {
	if model == nil {
		return false
	}
	acc, _ := model.Accepted(id)
	return acc
}

// matchesOne reports whether e matches one of fs.
func matchesOne(fs []nostr.Filter, e *nostr.Event) bool {
	for i := range fs {
		if fs[i].Matches(e) {
			return true
		}
	}
	return false
}

// replacedNotes says how many of the answers judged were to REQs that
// replaced an open subscription, and what was set aside of them.
func replacedNotes(done []*queryRecord) []string {
	var n, aside int64
	for _, r := range done {
		if len(r.replaced) > 0 {
			n++
			aside += r.aside
		}
	}
	if n == 0 {
		return nil
	}
	note := fmt.Sprintf("%d of %d answers verified were to a REQ sent under the id of a subscription still open, replacing it (NIP-01: %q): each is judged against its own filters", n, len(done), sentReplace)
	if aside > 0 {
		note += fmt.Sprintf("; %d events that came under such an id matching only the replaced REQ's filters, or a second time matching both, were set aside as the replaced subscription's (not owed, not judged)", aside)
	}
	return []string{note}
}
