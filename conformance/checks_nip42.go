package conformance

import (
	"errors"
	"strings"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
)

// NIP-42 sentences, quoted exactly. "relays must ensure:" heads the list
// sent42Verify is an item of (lower-case must: rated MUST, as NIP-01's);
// the prefixes "can be used": rated MAY; relays "CAN send" a challenge
// and a client "MAY decide to send its `AUTH`": MAY.
const (
	sent42OK        = "`AUTH` messages sent by clients MUST be answered with an `OK` message, like any `EVENT` message."
	sent42Broadcast = "Relays MUST exclude `kind: 22242` events from being broadcasted to any client."
	sent42Verify    = "that the `\"challenge\"` tag matches the challenge sent before;"
	sent42Session   = "The client MAY decide to send its `AUTH` event at any point and the authenticated session is valid afterwards for the duration of the connection."
	sent42Prefix    = "`\"auth-required: \"` - for when a client has not performed `AUTH` and the relay requires that to fulfill the query or write the event."
)

const kindAuth = 22242

// challenge reads p's frames until the answer to a REQ sent now ends
// (EOSE or CLOSED): the relay's last AUTH challenge by then ("" if none).
func (t *checkRun) challenge(p *probe) (string, error) {
	sub := "h" + t.nonce
	if err := p.req(t.ctx, sub, nostr.Filter{Tags: map[string][]string{"t": {t.tag("challenge")}}}); err != nil {
		return "", err
	}
	var ch string
	err := t.frames(p, "", func(f frame) (bool, error) {
		if f.label == "AUTH" {
			ch = f.str(0)
		}
		return (f.label == "EOSE" || f.label == "CLOSED") && f.str(0) == sub, nil
	})
	return ch, err
}

// authEvent signs a kind-22242 event for this relay and challenge with k.
func (t *checkRun) authEvent(k *corpus.Author, challenge string) (*nostr.Event, error) {
	ev := note(kindAuth, now(), "", nostr.Tag{"relay", t.url}, nostr.Tag{"challenge", challenge})
	return ev, t.sign([]*corpus.Author{k}, ev)
}

// sendAuth sends ["AUTH",ev] on p.
func (t *checkRun) sendAuth(p *probe, ev *nostr.Event) error {
	return p.write(t.ctx, append(ev.AppendJSON([]byte(`["AUTH",`)), ']'))
}

// challenged is a new connection without AUTH and the relay's challenge
// on it, as challenge reads it ("" if none).
func (t *checkRun) challenged() (*probe, string, error) {
	p, err := t.rawConn()
	if err != nil {
		return nil, "", err
	}
	ch, err := t.challenge(p)
	return p, ch, err
}

// authAnswer sends on p an AUTH signed by a fresh key for challenge and
// reads its OK. When no OK could be read, the check's outcome is the
// second value (undecided, or unknown: no OK) and answered is false.
func (t *checkRun) authAnswer(p *probe, challenge string) (o ok, stop outcome, answered bool) {
	ev, err := t.authEvent(t.key(), challenge)
	if err != nil {
		return ok{}, undecided(err), false
	}
	if err := t.sendAuth(p, ev); err != nil {
		return ok{}, undecided(err), false
	}
	o, err = t.okFor(p, ev.ID)
	if err != nil {
		return ok{}, unknown("no OK for the AUTH (see nip42.auth-ok): %v", err), false
	}
	return o, outcome{}, true
}

// authOK (NIP-42): an AUTH (with the relay's challenge, or a made-up one
// when it sent none) gets an OK, true or false; a regular EVENT sent after
// it is the sync point.
func authOK(t *checkRun) outcome {
	p, ch, err := t.challenged()
	if err != nil {
		return undecided(err)
	}
	if ch == "" {
		ch = "relaybench-no-challenge-" + t.nonce
	}
	k := t.key()
	ev, err := t.authEvent(k, ch)
	if err != nil {
		return undecided(err)
	}
	marker := note(kindNote, now(), "marker "+t.nonce, tTag(t.tag("mark")))
	if err := t.sign([]*corpus.Author{k}, marker); err != nil {
		return undecided(err)
	}
	if err := t.sendAuth(p, ev); err != nil {
		return undecided(err)
	}
	if err := p.event(t.ctx, marker); err != nil {
		return undecided(err)
	}
	return answeredAfter(t, p, ev.ID, marker.ID, "OK", "an AUTH message")
}

// authAcceptedCheck (NIP-42): an AUTH signed for the relay's challenge is
// answered OK true.
func authAcceptedCheck(t *checkRun) outcome {
	p, ch, err := t.challenged()
	switch {
	case err != nil:
		return undecided(err)
	case ch == "":
		return named("no AUTH challenge came on a new connection before the answer to a REQ: a client has nothing to sign (relays \"CAN send\" it)")
	}
	o, stop, answered := t.authAnswer(p, ch)
	switch {
	case !answered:
		return stop
	case !o.accepted:
		return named("an AUTH signed for the relay's challenge %q by a fresh key was refused: %q", ch, o.reason)
	}
	return pass()
}

// authWrongChallenge (NIP-42): an AUTH whose challenge tag is not the
// relay's is refused (OK false).
func authWrongChallenge(t *checkRun) outcome {
	p, ch, err := t.challenged()
	if err != nil {
		return undecided(err)
	}
	o, stop, answered := t.authAnswer(p, "relaybench-wrong-"+t.nonce)
	switch {
	case !answered:
		return stop
	case o.accepted && ch == "":
		return fail("an AUTH with a challenge the relay never sent (it sent none) was accepted: OK true %q", o.reason)
	case o.accepted:
		return fail("an AUTH with the challenge %q, not the relay's %q, was accepted: OK true %q", "relaybench-wrong-"+t.nonce, ch, o.reason)
	}
	return pass()
}

// authNotBroadcast (NIP-42): a subscription to a fresh key's kind-22242
// events gets neither the AUTH that key sends on another connection nor a
// kind-22242 EVENT it publishes; a regular marker is the sync point.
func authNotBroadcast(t *checkRun) outcome {
	k := t.key()
	mark := t.tag("mark")
	marker := note(kindNote, now(), "marker "+t.nonce, tTag(mark))
	if err := t.sign([]*corpus.Author{k}, marker); err != nil {
		return undecided(err)
	}
	sub := "b" + t.nonce
	q, err := t.conn()
	if err != nil {
		return undecided(err)
	}
	if err := q.req(t.ctx, sub, nostr.Filter{Authors: []string{marker.PubKey}, Kinds: []int{kindAuth}}, nostr.Filter{Tags: map[string][]string{"t": {mark}}}); err != nil {
		return undecided(err)
	}
	if o, open := opened(t.collect(q, sub)); !open {
		return o
	}
	ids, err := t.publishAuthEvents(k)
	if err != nil {
		return undecided(err)
	}
	if err := t.store(marker); err != nil {
		return undecided(err)
	}
	got, err := t.until(q, sub, marker.ID)
	for _, id := range ids {
		if containsID(got, id) {
			return fail("a kind-22242 event (%s) was delivered to a subscription on another connection", short(id))
		}
	}
	if err != nil {
		return unknown("the marker event was not delivered (%v)", err)
	}
	return pass()
}

// publishAuthEvents sends, on a connection of its own, an AUTH signed by k
// and an EVENT of another kind-22242 event by k, and waits for their OKs
// (at most Timeout each: a relay may not answer the EVENT). It returns
// their ids.
func (t *checkRun) publishAuthEvents(k *corpus.Author) ([]string, error) {
	p, ch, err := t.challenged()
	if err != nil {
		return nil, err
	}
	auth, err := t.authEvent(k, ch)
	if err != nil {
		return nil, err
	}
	ev, err := t.authEvent(k, ch+"-event")
	if err != nil {
		return nil, err
	}
	if err := t.sendAuth(p, auth); err != nil {
		return nil, err
	}
	if err := p.event(t.ctx, ev); err != nil {
		return nil, err
	}
	for _, id := range []string{auth.ID, ev.ID} {
		if _, err := t.okFor(p, id); err != nil && !errors.Is(err, errWait) {
			return nil, err
		}
	}
	return []string{auth.ID, ev.ID}, nil
}

// authRequiredPrefix (NIP-42), on a relay whose NIP-11 says
// limitation.auth_required: an EVENT and a REQ of a connection that has
// not authenticated are refused with "auth-required: …".
func authRequiredPrefix(t *checkRun) outcome {
	if t.info == nil || !t.info.Limitation.AuthRequired {
		return outcome{results.CheckNotAnnounced, "the relay does not announce limitation.auth_required in its NIP-11 document: nothing to refuse"}
	}
	p, err := t.rawConn()
	if err != nil {
		return undecided(err)
	}
	evs, err := t.fresh(now(), func(int) []nostr.Tag { return []nostr.Tag{tTag(t.tag("ar"))} }, 1)
	if err != nil {
		return undecided(err)
	}
	if err := p.event(t.ctx, evs[0]); err != nil {
		return undecided(err)
	}
	o, err := t.okFor(p, evs[0].ID)
	switch {
	case err != nil:
		return unknown("no OK for an EVENT before AUTH: %v", err)
	case o.accepted:
		return named("limitation.auth_required is true, yet an EVENT of a connection that had not authenticated was accepted")
	case !authRequired(o.reason):
		return named("an EVENT before AUTH was refused without the auth-required: prefix: %q", o.reason)
	}
	sub := "v" + t.nonce
	if err := p.req(t.ctx, sub, nostr.Filter{Tags: map[string][]string{"t": {t.tag("ar")}}}); err != nil {
		return undecided(err)
	}
	a, err := t.collect(p, sub)
	switch {
	case err != nil:
		return unknown("no answer to a REQ before AUTH: %v", err)
	case !a.closed:
		return named("limitation.auth_required is true, yet a REQ of a connection that had not authenticated was answered EOSE")
	case !strings.HasPrefix(a.reason, "auth-required:"):
		return named("a REQ before AUTH was refused without the auth-required: prefix: %q", a.reason)
	}
	return pass()
}
