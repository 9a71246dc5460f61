package conformance

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	neg "github.com/nbd-wtf/go-nostr/nip77/negentropy"
	"github.com/nbd-wtf/go-nostr/nip77/negentropy/storage/vector"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/negentropy"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/wire"
)

// NIP-77 sentences, quoted exactly. NIP-77 describes the protocol without
// RFC keywords; relaybench reads the relay's part of it (an answer to
// NEG-OPEN, ids reconciled right) as the protocol's definition: a MUST.
const (
	sent77Answer = "Relay constructs a response and returns it to the client in a `NEG-MSG` message."
	sent77Goal   = "The goal of the protocol is for the client to learn the set of IDs that it has and the server does not, and the set of items that the server has and it does not."
)

// negOpenAnswered (NIP-77): a NEG-OPEN (an empty local set) is answered
// with NEG-MSG or NEG-ERR; a REQ sent after it is the sync point.
func negOpenAnswered(t *checkRun) outcome {
	p, err := t.conn()
	if err != nil {
		return undecided(err)
	}
	v := vector.New()
	v.Seal()
	first := neg.New(v, 0).Start()
	sub := "n" + t.nonce
	f := nostr.Filter{Tags: map[string][]string{"t": {t.tag("neg")}}}
	msg := append(append([]byte(`["NEG-OPEN",`), nostr.AppendJSONString(nil, sub)...), ',')
	msg = append(f.AppendJSON(msg), ',')
	msg = append(append(msg, strconv.Quote(first)...), ']')
	if err := p.sendRaw(t.ctx, msg); err != nil {
		return undecided(err)
	}
	marker := "k" + t.nonce
	if err := p.req(t.ctx, marker, nostr.Filter{Tags: map[string][]string{"t": {t.tag("mark")}}}); err != nil {
		return undecided(err)
	}
	o := negAnswer(t, p, sub, marker)
	_ = p.sendRaw(t.ctx, append(append([]byte(`["NEG-CLOSE",`), nostr.AppendJSONString(nil, sub)...), ']'))
	return o
}

// negAnswer waits for NEG-MSG or NEG-ERR for sub, or for the answer to the
// REQ marker and Timeout more.
func negAnswer(t *checkRun, p *probe, sub, marker string) outcome {
	return markerWait{probe: "the NEG-OPEN", marker: "REQ", unanswered: "NEG-OPEN got neither NEG-MSG nor NEG-ERR",
		answer: func(f frame) (outcome, bool) {
			switch {
			case f.label == "NEG-MSG" && f.str(0) == sub:
				return pass(), true
			case f.label == "NEG-ERR" && f.str(0) == sub:
				if r := f.str(1); !hasPrefix(r) {
					return named("NEG-ERR came without the machine-readable prefix (NIP-77: \"They should begin with a machine-readable single-word prefix\"): %q", r), true
				}
				return pass(), true
			}
			return outcome{}, false
		},
		isMarker: func(f frame) bool { return (f.label == "EOSE" || f.label == "CLOSED") && f.str(0) == marker },
	}.run(t, p)
}

// negReconcile (NIP-77): three events stored by a fresh key; the client
// holds one of them and two the relay never got: a reconciliation over
// {authors:[key]} says the client has the two and needs the other two.
func negReconcile(t *checkRun) outcome {
	k := t.key()
	tag := t.tag("neg")
	evs := make([]*nostr.Event, 5)
	for i := range evs {
		evs[i] = note(kindNote, now()-60-int64(i), fmt.Sprintf("negentropy %s %d", t.nonce, i), tTag(tag))
	}
	if err := t.sign([]*corpus.Author{k}, evs...); err != nil {
		return undecided(err)
	}
	stored, localOnly := evs[:3], evs[3:]
	if err := t.store(stored...); err != nil {
		return undecided(err)
	}
	local := []negentropy.Item{{CreatedAt: stored[0].CreatedAt, ID: stored[0].ID}}
	for _, e := range localOnly {
		local = append(local, negentropy.Item{CreatedAt: e.CreatedAt, ID: e.ID})
	}
	set, err := negentropy.NewSet(local)
	if err != nil {
		return undecided(err)
	}
	cn, err := wire.Dial(t.ctx, t.url, wire.Options{DialTimeout: t.opts.Timeout})
	if err != nil {
		return undecided(&dialError{err})
	}
	defer cn.Close()
	f := nostr.Filter{Authors: []string{stored[0].PubKey}}
	t.log.note(fmt.Sprintf("NEG-OPEN %q over %s: the client holds %s", "r"+t.nonce, string(f.AppendJSON(nil)), shorts(ids(local))))
	res, err := negentropy.Sync(t.ctx, cn, "r"+t.nonce, f, set, negentropy.Options{Timeout: t.opts.Timeout})
	t.log.note(fmt.Sprintf("after %d round trips: have %s, need %s", res.RoundTrips, shorts(res.Have), shorts(res.Need)))
	return judgeReconcile(res, err, eventIDs(localOnly), eventIDs(stored[1:]))
}

// judgeReconcile compares a reconciliation's have and need with the sets
// owed.
func judgeReconcile(res negentropy.Result, err error, have, need []string) outcome {
	var rel *negentropy.RelayError
	var perr *negentropy.ProtocolError
	switch {
	case errors.As(err, &rel):
		return notRun("the relay refused the reconciliation: NEG-ERR %q", rel.Reason)
	case errors.As(err, &perr):
		return fail("the relay's NEG-MSG could not be read: %v", perr.Err)
	case err != nil:
		return unknown("the reconciliation did not end: %v", err)
	}
	slices.Sort(res.Have)
	slices.Sort(res.Need)
	slices.Sort(have)
	slices.Sort(need)
	var wrong []string
	if !slices.Equal(res.Have, have) {
		wrong = append(wrong, fmt.Sprintf("have (only the client) %s, owed %s", shorts(res.Have), shorts(have)))
	}
	if !slices.Equal(res.Need, need) {
		wrong = append(wrong, fmt.Sprintf("need (only the relay) %s, owed %s", shorts(res.Need), shorts(need)))
	}
	if len(wrong) > 0 {
		return fail("a reconciliation over the events of a fresh key (3 stored, the client holding 1 of them and 2 others) said %s", strings.Join(wrong, "; "))
	}
	return pass()
}

func ids(items []negentropy.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

func eventIDs(evs []*nostr.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}
