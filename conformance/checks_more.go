package conformance

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/nostr"
)

// ephemeralOK: an ephemeral EVENT gets an OK (true or false). A relay
// that answers a regular EVENT sent after it, and Timeout later still has
// not answered the ephemeral one, fails; without that sync point the
// result is unknown.
func ephemeralOK(t *checkRun) outcome {
	k := t.key()
	eph := note(kindEphemeral, now(), "ephemeral "+t.nonce, tTag(t.tag("eph")))
	reg := note(kindNote, now(), "marker "+t.nonce, tTag(t.tag("mark")))
	if err := t.sign([]*corpus.Author{k}, eph, reg); err != nil {
		return undecided(err)
	}
	p, err := t.publisher()
	if err != nil {
		return undecided(err)
	}
	if err := p.event(t.ctx, eph); err != nil {
		return undecided(err)
	}
	if err := p.event(t.ctx, reg); err != nil {
		return undecided(err)
	}
	return answeredAfter(t, p, eph.ID, reg.ID, "OK", "an ephemeral EVENT")
}

// answeredAfter waits for an answer (label) to first (by its id in the
// frame's first element) and for the OK of marker, sent after it. It
// fails when the marker is answered and then Timeout passes without an
// answer to first.
func answeredAfter(t *checkRun, p *probe, first, marker, label, what string) outcome {
	return markerWait{probe: what, marker: "EVENT", unanswered: what + " was never answered with " + label,
		answer: func(f frame) (outcome, bool) {
			id := f.str(0)
			return pass(), f.label == label && id == first || label == "CLOSED" && f.label == "EOSE" && id == first
		},
		isMarker: func(f frame) bool { return f.label == "OK" && f.str(0) == marker },
	}.run(t, p)
}

// markerWait is a wait for the answer to a probe that a marker follows on
// the same connection: the marker's answer says the relay got past the
// probe, and gives the probe Timeout more from then.
type markerWait struct {
	probe, marker string // what they are, for the details: "the NEG-OPEN", "REQ"
	unanswered    string // the failure's first words: what the probe never got
	// answer is the probe's outcome when f answers the probe (done).
	answer   func(f frame) (o outcome, done bool)
	isMarker func(f frame) bool
}

// run reads p's frames until the probe's answer. A wait that ends with
// the marker answered and the probe not fails; one that ends before the
// marker's answer says nothing of the relay (unknown).
func (w markerWait) run(t *checkRun, p *probe) outcome {
	ctx, cancel := t.wait()
	defer func() { cancel() }()
	markerDone := false
	for {
		f, err := p.next(ctx)
		if err != nil {
			if markerDone {
				return fail("%s: the relay answered the %s sent after it, then nothing more for %s", w.unanswered, w.marker, t.opts.Timeout)
			}
			return unknown("neither %s nor the %s after it was answered (%v)", w.probe, w.marker, err)
		}
		if o, done := w.answer(f); done {
			return o
		}
		if !markerDone && w.isMarker(f) {
			markerDone = true
			cancel()
			ctx, cancel = t.wait() // Timeout more after the marker's answer
		}
	}
}

// ephemeralLive: a subscription to a fresh key's ephemeral kind and a
// marker tag; the ephemeral event, then (once it is answered, or Timeout
// later) a regular marker, are published: the ephemeral one comes before
// the marker.
func ephemeralLive(t *checkRun) outcome {
	k := t.key()
	mark := t.tag("mark")
	eph := note(kindEphemeral, now(), "ephemeral "+t.nonce)
	reg := note(kindNote, now(), "marker "+t.nonce, tTag(mark))
	if err := t.sign([]*corpus.Author{k}, eph, reg); err != nil {
		return undecided(err)
	}
	p, err := t.conn()
	if err != nil {
		return undecided(err)
	}
	sub := "e" + t.nonce
	if err := p.req(t.ctx, sub, nostr.Filter{Authors: []string{eph.PubKey}, Kinds: []int{kindEphemeral}}, nostr.Filter{Tags: map[string][]string{"t": {mark}}}); err != nil {
		return undecided(err)
	}
	if o, open := opened(t.collect(p, sub)); !open {
		return o
	}
	if err := t.sendThenMarker(eph, reg); err != nil {
		return undecided(err)
	}
	got, err := t.until(p, sub, reg.ID)
	switch {
	case containsID(got, eph.ID):
		return pass()
	case t.refused(eph.ID) != "":
		return notRun("the relay refused the ephemeral event: %q", t.refused(eph.ID))
	case err != nil:
		return unknown("the marker event was not delivered (%v)", err)
	}
	return named("an ephemeral event was not delivered to a matching subscription before a regular event published after it")
}

// sendThenMarker sends ev and waits for its OK (at most Timeout: a relay
// may never answer it, which ephemeral.ok checks), then stores marker: the
// relay has handled ev before the marker when it answered ev. The OK of
// ev, if it came, is in t.oks.
func (t *checkRun) sendThenMarker(ev, marker *nostr.Event) error {
	if _, err := t.send(ev); err != nil && !errors.Is(err, errWait) {
		return err
	}
	return t.store(marker)
}

// refused is the reason of an OK false read for id ("" if none was).
func (t *checkRun) refused(id string) string {
	if o, ok := t.oks[id]; ok && !o.accepted {
		return "refused: " + o.reason
	}
	return ""
}

func containsID(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// ephemeralNotStored: an ephemeral event (then a regular marker, as a
// sync point) is published; the ephemeral one does not come back to a
// later REQ.
func ephemeralNotStored(t *checkRun) outcome {
	k := t.key()
	eph := note(kindEphemeral, now(), "ephemeral "+t.nonce)
	reg := note(kindNote, now(), "marker "+t.nonce, tTag(t.tag("mark")))
	if err := t.sign([]*corpus.Author{k}, eph, reg); err != nil {
		return undecided(err)
	}
	if err := t.sendThenMarker(eph, reg); err != nil {
		return undecided(err)
	}
	a, err := t.query("n"+t.nonce, nostr.Filter{Authors: []string{eph.PubKey}, Kinds: []int{kindEphemeral}})
	if err != nil {
		return undecided(err)
	}
	if len(a.events) > 0 {
		return named("an ephemeral event (kind %d) came back to a REQ after it was published: the relay stored it", kindEphemeral)
	}
	return pass()
}

// duplicateOK: the same EVENT twice: the second OK is true (NIP-01's
// example, "duplicate: …").
func duplicateOK(t *checkRun) outcome {
	evs, err := t.fresh(now()-60, func(int) []nostr.Tag { return []nostr.Tag{tTag(t.tag("dup"))} }, 1)
	if err != nil {
		return undecided(err)
	}
	if err := t.store(evs...); err != nil {
		return undecided(err)
	}
	o, err := t.send(evs[0])
	if err != nil {
		return undecided(err)
	}
	if !o.accepted {
		return named("a duplicate EVENT was answered OK false %q; NIP-01's example answers true \"duplicate: …\" (clients such as nostr-tools' publish() reject on false)", o.reason)
	}
	return pass()
}

// malformedClosed: a REQ whose filter has a string for kinds; a valid REQ
// after it on the same connection is the sync point. CLOSED for the
// malformed one passes; EOSE (the relay fulfilled it somehow) is named;
// the valid REQ answered and Timeout later nothing for the malformed one
// fails.
func malformedClosed(t *checkRun) outcome { return malformedRefused(t, "REQ", "EOSE") }

// malformedRefused is malformedClosed for verb (REQ or COUNT, NIP-45),
// whose answer when fulfilled is done (EOSE or COUNT).
func malformedRefused(t *checkRun, verb, done string) outcome {
	p, err := t.conn()
	if err != nil {
		return undecided(err)
	}
	bad, good := "m"+t.nonce, "g"+t.nonce
	if err := p.sendRaw(t.ctx, []byte(`["`+verb+`",`+strconv.Quote(bad)+`,{"kinds":"one","#t":["`+t.tag("bad")+`"]}]`)); err != nil {
		return undecided(err)
	}
	if err := p.sendRaw(t.ctx, []byte(`["`+verb+`",`+strconv.Quote(good)+`,{"#t":["`+t.tag("good")+`"]}]`)); err != nil {
		return undecided(err)
	}
	return markerWait{probe: "the malformed " + verb, marker: "valid " + verb,
		unanswered: "a " + verb + " with a malformed filter ({\"kinds\":\"one\"}) got neither CLOSED nor " + done,
		answer: func(f frame) (outcome, bool) {
			switch {
			case f.label == "CLOSED" && f.str(0) == bad:
				if r := f.str(1); !hasPrefix(r) {
					return named("CLOSED came without the machine-readable prefix (\"prefix: message\"): %q", r), true
				}
				return pass(), true
			case f.label == done && f.str(0) == bad:
				return named("a %s with a malformed filter ({\"kinds\":\"one\"}) was answered %s, not refused with CLOSED", verb, done), true
			}
			return outcome{}, false
		},
		isMarker: func(f frame) bool { return (f.label == done || f.label == "CLOSED") && f.str(0) == good },
	}.run(t, p)
}

// hasPrefix reports whether a CLOSED or OK reason starts "word:".
func hasPrefix(r string) bool {
	i := strings.IndexByte(r, ':')
	return i > 0 && !strings.ContainsAny(r[:i], " \t")
}

// deletion (NIP-09): an event, then a kind-5 deletion request by the same
// key: the event no longer comes back.
func deletion(t *checkRun) outcome {
	k := t.key()
	ev := note(kindNote, now()-60, "to delete "+t.nonce, tTag(t.tag("del")))
	if err := t.sign([]*corpus.Author{k}, ev); err != nil {
		return undecided(err)
	}
	del := note(5, now(), "", nostr.Tag{"e", ev.ID}, nostr.Tag{"k", "1"})
	if err := t.sign([]*corpus.Author{k}, del); err != nil {
		return undecided(err)
	}
	if err := t.store(ev, del); err != nil {
		return undecided(err)
	}
	a, err := t.query("d"+t.nonce, nostr.Filter{IDs: []string{ev.ID}})
	if err != nil {
		return undecided(err)
	}
	if len(a.events) > 0 {
		return named("the event %s still came back after its author's deletion request %s was accepted", short(ev.ID), short(del.ID))
	}
	return pass()
}

// expired (NIP-40): an event whose expiration is a minute past: refused,
// or accepted and never returned.
func expired(t *checkRun) outcome {
	ev := note(kindNote, now()-120, "expired "+t.nonce, tTag(t.tag("exp")), nostr.Tag{"expiration", strconv.FormatInt(now()-60, 10)})
	if err := t.sign([]*corpus.Author{t.key()}, ev); err != nil {
		return undecided(err)
	}
	o, err := t.send(ev)
	if err != nil {
		return undecided(err)
	}
	if !o.accepted && authRequired(o.reason) { // refused before its expiry was looked at
		return undecided(&refusedError{ev.ID, o.reason})
	}
	a, err := t.query("x"+t.nonce, nostr.Filter{IDs: []string{ev.ID}})
	if err != nil {
		return undecided(err)
	}
	if len(a.events) > 0 {
		return named("an event expired a minute before it was published was answered OK %v %q and came back to a REQ", o.accepted, o.reason)
	}
	return pass()
}

// twoSubscriptionsLive: two subscriptions with one filter on one
// connection; a new matching event comes under both.
func twoSubscriptionsLive(t *checkRun) outcome {
	tag := t.tag("two")
	evs, err := t.fresh(now(), func(int) []nostr.Tag { return []nostr.Tag{tTag(tag)} }, 1)
	if err != nil {
		return undecided(err)
	}
	p, err := t.conn()
	if err != nil {
		return undecided(err)
	}
	subs := []string{"a" + t.nonce, "b" + t.nonce}
	for _, sub := range subs {
		if err := p.req(t.ctx, sub, nostr.Filter{Tags: map[string][]string{"t": {tag}}}); err != nil {
			return undecided(err)
		}
		if o, open := opened(t.collect(p, sub)); !open {
			return outcome{o.status, fmt.Sprintf("subscription %q: %s", sub, o.detail)}
		}
	}
	if err := t.store(evs...); err != nil {
		return undecided(err)
	}
	var missing []string
	got := t.untilAll(p, evs[0].ID, subs...)
	for _, sub := range subs {
		if !got[sub] {
			missing = append(missing, sub)
		}
	}
	switch len(missing) {
	case 0:
		return pass()
	case 1:
		return named("of two subscriptions with the same filter on one connection, only one got the new event (not %q)", missing[0])
	}
	return unknown("neither subscription got the new event")
}

// untilAll reads p's frames until the EVENT id came under every one of
// subs, or Timeout; it returns the subscriptions that got it.
func (t *checkRun) untilAll(p *probe, id string, subs ...string) map[string]bool {
	got := map[string]bool{}
	_ = t.frames(p, "", func(f frame) (bool, error) {
		if f.label == "EVENT" && slices.Contains(subs, f.str(0)) {
			if ev := t.event(f); ev != nil && ev.ID == id {
				got[f.str(0)] = true
			}
		}
		return len(got) == len(subs), nil
	})
	return got
}
