package embedded

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	gonostr "github.com/nbd-wtf/go-nostr"
)

// NIP-01 conformance of the relay's message handling, on every store: each
// test sends exact message sequences and checks invariants that hold
// whatever the scheduling (no sleeps).

func wsURL(srv string) string { return "ws" + strings.TrimPrefix(srv, "http") }

// frame is one relay message, decoded.
type frame struct {
	label string
	sub   string // EVENT, EOSE, CLOSED: the subscription id
	ev    gonostr.Event
	raw   []json.RawMessage
}

func (c *wsClient) next(ctx context.Context, t *testing.T) frame {
	t.Helper()
	m, label, err := c.read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	f := frame{label: label, raw: m}
	switch label {
	case "EVENT", "EOSE", "CLOSED":
		json.Unmarshal(m[1], &f.sub)
	}
	if label == "EVENT" && len(m) > 2 {
		if err := json.Unmarshal(m[2], &f.ev); err != nil {
			t.Fatalf("EVENT: %v", err)
		}
	}
	return f
}

// untilEOSE reads to the EOSE of sub and returns the ids of its events,
// in the order received; any other subscription's message fails the test.
func (c *wsClient) untilEOSE(ctx context.Context, t *testing.T, sub string) []string {
	t.Helper()
	var got []string
	for {
		f := c.next(ctx, t)
		switch {
		case f.label == "EVENT" && f.sub == sub:
			got = append(got, f.ev.ID)
		case f.label == "EOSE" && f.sub == sub:
			return got
		default:
			t.Fatalf("waiting for EOSE of %q: got %s", sub, f.raw)
		}
	}
}

// untilEvent reads until the event with id arrives and returns how many
// times each event id was received meanwhile (that one included).
func (c *wsClient) untilEvent(ctx context.Context, t *testing.T, id string) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for {
		f := c.next(ctx, t)
		if f.label != "EVENT" {
			continue
		}
		seen[f.ev.ID]++
		if f.ev.ID == id {
			return seen
		}
	}
}

func mustPublish(ctx context.Context, t *testing.T, c *wsClient, evs ...gonostr.Event) {
	t.Helper()
	for _, ev := range evs {
		if err := c.Publish(ctx, ev); err != nil {
			t.Fatalf("publish %s: %v", ev.Content, err)
		}
	}
}

func conformCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func eachStore(t *testing.T, f func(t *testing.T, store string)) {
	for _, store := range Stores {
		t.Run(store, func(t *testing.T) { f(t, store) })
	}
}

// TestReqSameIDReplaces: a second REQ with an open subscription's id
// replaces it (NIP-01: "a new subscription is created, replacing the old
// one"): afterwards only the second filter's events arrive.
func TestReqSameIDReplaces(t *testing.T) {
	eachStore(t, func(t *testing.T, store string) {
		_, url, ctx, sub := dialRelay(t, store)
		pub := connect(ctx, t, url)
		defer pub.Close()
		for _, tag := range []string{"first", "second"} {
			if err := sub.write(ctx, "REQ", "x", gonostr.Filter{Tags: gonostr.TagMap{"t": {tag}}}); err != nil {
				t.Fatal(err)
			}
			if got := sub.untilEOSE(ctx, t, "x"); len(got) != 0 {
				t.Fatalf("empty relay answered %v", got)
			}
		}
		sk, now := gonostr.GeneratePrivateKey(), time.Now().Unix()
		old := signed(t, sk, now, 1, gonostr.Tags{{"t", "first"}}, "old filter")
		cur := signed(t, sk, now, 1, gonostr.Tags{{"t", "second"}}, "new filter")
		// Each event is delivered before its OK is sent, so an event of the
		// replaced subscription would arrive before cur.
		mustPublish(ctx, t, pub, old, cur)
		if seen := sub.untilEvent(ctx, t, cur.ID); len(seen) != 1 || seen[cur.ID] != 1 {
			t.Errorf("after the second REQ x: got %v, want only %s once (the first REQ x was replaced)", seen, cur.ID)
		}
	})
}

// TestCloseThenReqSameID: CLOSE then REQ with the same id, 200 times on one
// connection without waiting in between: every answer is the whole stored
// set then EOSE (khatru alone raced: some answers were a bare EOSE).
func TestCloseThenReqSameID(t *testing.T) {
	eachStore(t, func(t *testing.T, store string) {
		_, _, ctx, c := dialRelay(t, store)
		sk, now := gonostr.GeneratePrivateKey(), time.Now().Unix()
		var stored []gonostr.Event
		for i := range 5 {
			stored = append(stored, signed(t, sk, now-int64(i), 1, nil, fmt.Sprint("stored ", i)))
		}
		mustPublish(ctx, t, c, stored...)
		f := gonostr.Filter{Authors: []string{stored[0].PubKey}}
		wantIDs := want(stored...)
		if err := c.write(ctx, "REQ", "x", f); err != nil {
			t.Fatal(err)
		}
		for i := range 200 {
			got := c.untilEOSE(ctx, t, "x")
			slices.Sort(got)
			if !slices.Equal(got, wantIDs) {
				t.Fatalf("answer %d: %d events %v, want the %d stored", i, len(got), got, len(wantIDs))
			}
			if err := c.write(ctx, "CLOSE", "x"); err != nil {
				t.Fatal(err)
			}
			if err := c.write(ctx, "REQ", "x", f); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestEventOncePerReq: an event matching several filters of one REQ is sent
// once, in the stored answer and live.
func TestEventOncePerReq(t *testing.T) {
	eachStore(t, func(t *testing.T, store string) {
		r, url, ctx, sub := dialRelay(t, store)
		pub := connect(ctx, t, url)
		defer pub.Close()
		sk, now := gonostr.GeneratePrivateKey(), time.Now().Unix()
		both := signed(t, sk, now-2, 1, gonostr.Tags{{"t", "a"}, {"t", "b"}}, "both tags")
		onlyA := signed(t, sk, now-1, 1, gonostr.Tags{{"t", "a"}}, "tag a")
		mustPublish(ctx, t, pub, both, onlyA)
		// both stands for an event saved while the query runs, its
		// broadcast still to come: marked as being stored (as addEvent
		// does from before saving until after broadcasting).
		stored := r.storing(both.ID)
		filters := []any{"REQ", "x",
			gonostr.Filter{Tags: gonostr.TagMap{"t": {"a"}}},
			gonostr.Filter{Tags: gonostr.TagMap{"t": {"b"}}},
			gonostr.Filter{Authors: []string{both.PubKey}, Kinds: []int{1}},
		}
		if err := sub.write(ctx, filters...); err != nil {
			t.Fatal(err)
		}
		got := sub.untilEOSE(ctx, t, "x")
		slices.Sort(got)
		if !slices.Equal(got, want(both, onlyA)) {
			t.Errorf("stored answer %v, want %v: each event once", got, want(both, onlyA))
		}

		// Its broadcast after EOSE must not reach the REQ again.
		r.broadcast(&both)
		stored()
		liveBoth := signed(t, sk, now, 1, gonostr.Tags{{"t", "a"}, {"t", "b"}}, "live, both tags")
		marker := signed(t, sk, now, 1, gonostr.Tags{{"t", "b"}}, "marker")
		mustPublish(ctx, t, pub, liveBoth, marker)
		seen := sub.untilEvent(ctx, t, marker.ID)
		if len(seen) != 2 || seen[liveBoth.ID] != 1 || seen[marker.ID] != 1 {
			t.Errorf("live: got %v, want %s and %s once each and nothing else", seen, liveBoth.ID, marker.ID)
		}
	})
}

// TestDuplicateOKTrue: a duplicate EVENT, sent again later or twice at
// once, is answered OK true with a "duplicate:" reason (NIP-01's example).
func TestDuplicateOKTrue(t *testing.T) {
	eachStore(t, func(t *testing.T, store string) {
		_, _, ctx, c := dialRelay(t, store)
		sk, now := gonostr.GeneratePrivateKey(), time.Now().Unix()
		ev := signed(t, sk, now, 1, nil, "twice at once")
		for range 2 {
			if err := c.write(ctx, "EVENT", ev); err != nil {
				t.Fatal(err)
			}
		}
		var reasons []string
		for len(reasons) < 2 {
			f := c.next(ctx, t)
			if f.label != "OK" {
				continue
			}
			var ok bool
			var reason string
			json.Unmarshal(f.raw[2], &ok)
			json.Unmarshal(f.raw[3], &reason)
			if !ok {
				t.Fatalf("OK false %q", reason)
			}
			reasons = append(reasons, reason)
		}
		slices.Sort(reasons)
		if reasons[0] != "" || !strings.HasPrefix(reasons[1], "duplicate:") {
			t.Errorf("reasons %q: want one acceptance and one \"duplicate: …\"", reasons)
		}
		if ok, reason, err := c.PublishOK(ctx, ev); err != nil || !ok || !strings.HasPrefix(reason, "duplicate:") {
			t.Errorf("later duplicate: OK %v %q (%v)", ok, reason, err)
		}
	})
}

// TestEventThenReqInOrder: a REQ sent right after an EVENT, without waiting
// for the OK, sees the event in its stored answer.
func TestEventThenReqInOrder(t *testing.T) {
	eachStore(t, func(t *testing.T, store string) {
		_, _, ctx, c := dialRelay(t, store)
		sk, now := gonostr.GeneratePrivateKey(), time.Now().Unix()
		for i := range 20 {
			ev := signed(t, sk, now-int64(i), 1, nil, fmt.Sprint("in order ", i))
			sub := fmt.Sprint("q", i)
			if err := c.write(ctx, "EVENT", ev); err != nil {
				t.Fatal(err)
			}
			if err := c.write(ctx, "REQ", sub, gonostr.Filter{IDs: []string{ev.ID}}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for eose := false; !eose; {
				f := c.next(ctx, t)
				switch {
				case f.label == "EVENT" && f.sub == sub:
					got = append(got, f.ev.ID)
				case f.label == "EOSE" && f.sub == sub:
					eose = true
				}
			}
			if len(got) != 1 || got[0] != ev.ID {
				t.Fatalf("REQ after EVENT %d: stored answer %v, want the event", i, got)
			}
			if err := c.write(ctx, "CLOSE", sub); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestNativeSearch: the native store answers NIP-50 searches (every word of
// the query in the content, case-insensitively) and announces NIP-50; the
// other stores do not announce it.
func TestNativeSearch(t *testing.T) {
	for _, store := range Stores {
		_, srv := startRelay(t, store)
		doc := fetchInfo(t, srv.URL)
		if has := slices.Contains(doc.NIPs, 50); has != (store == "native") {
			t.Errorf("%s: supported_nips %v", store, doc.NIPs)
		}
	}
	_, url, ctx, c := dialRelay(t, "native")
	sk, now := gonostr.GeneratePrivateKey(), time.Now().Unix()
	hello := signed(t, sk, now-3, 1, nil, "Hello Nostr world")
	bye := signed(t, sk, now-2, 1, nil, "goodbye, WORLD")
	other := signed(t, sk, now-1, 1, gonostr.Tags{{"t", "hello"}}, "nothing to see")
	mustPublish(ctx, t, c, hello, bye, other)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"world", want(hello, bye)},
		{"HELLO", want(hello)},
		{"hello world", want(hello)},
		{"orld", want(hello, bye)},
		{"world include:spam", want(hello, bye)},
		{"absent", want()},
	} {
		got, err := c.QuerySync(ctx, gonostr.Filter{Search: tc.query, Kinds: []int{1}})
		if err != nil {
			t.Fatal(err)
		}
		if g := ids(got); !slices.Equal(g, tc.want) {
			t.Errorf("search %q: got %v, want %v", tc.query, g, tc.want)
		}
	}
	// Live: only the events holding the words reach a search REQ.
	if err := c.write(ctx, "REQ", "live", gonostr.Filter{Search: "fresh"}); err != nil {
		t.Fatal(err)
	}
	c.untilEOSE(ctx, t, "live")
	pub := connect(ctx, t, url)
	defer pub.Close()
	stale := signed(t, sk, now, 1, nil, "stale news")
	fresh := signed(t, sk, now, 1, nil, "FRESH news")
	mustPublish(ctx, t, pub, stale, fresh)
	if seen := c.untilEvent(ctx, t, fresh.ID); len(seen) != 1 {
		t.Errorf("live search: got %v, want only %s", seen, fresh.ID)
	}
}

// TestMalformedAnswered: a REQ or COUNT that cannot be parsed gets CLOSED
// with an "invalid:" reason under its id (NIP-01: CLOSED "MUST be sent in
// response to a REQ when the relay refuses to fulfill it"), an EVENT an
// OK false, anything else a NOTICE; the connection stays usable.
func TestMalformedAnswered(t *testing.T) {
	_, _, ctx, c := dialRelay(t, "native")
	for _, tc := range []struct{ msg, label, id string }{
		{`["REQ","bad",{"kinds":"x"}]`, "CLOSED", "bad"},
		{`["COUNT","badc",{"kinds":"x"}]`, "CLOSED", "badc"},
		{`["EVENT",{"id":"abc","kind":"x"}]`, "OK", "abc"},
		{`["WHAT"]`, "NOTICE", ""},
		{`not json`, "NOTICE", ""},
	} {
		if err := c.ws.Write(ctx, websocket.MessageText, []byte(tc.msg)); err != nil {
			t.Fatal(err)
		}
		f := c.next(ctx, t)
		var id, reason string
		if len(f.raw) > 1 {
			json.Unmarshal(f.raw[1], &id)
		}
		json.Unmarshal(f.raw[len(f.raw)-1], &reason)
		if f.label != tc.label || (tc.id != "" && id != tc.id) || !strings.HasPrefix(reason, "invalid:") {
			t.Errorf("%s: got %s, want %s %q \"invalid: …\"", tc.msg, f.raw, tc.label, tc.id)
		}
	}
	if got, err := c.QuerySync(ctx, gonostr.Filter{Kinds: []int{1}}); err != nil || len(got) != 0 {
		t.Errorf("after malformed messages: %v %v", got, err)
	}
}

// TestProtectedEventNeedsAuth: a NIP-70 protected event is refused
// "auth-required:" with an AUTH challenge; after NIP-42 AUTH by its author
// it is accepted.
func TestProtectedEventNeedsAuth(t *testing.T) {
	_, url, ctx, c := dialRelay(t, "native")
	sk := gonostr.GeneratePrivateKey()
	ev := signed(t, sk, time.Now().Unix(), 1, gonostr.Tags{{"-"}}, "protected")
	if err := c.write(ctx, "EVENT", ev); err != nil {
		t.Fatal(err)
	}
	var challenge string
	for refused := false; !refused || challenge == ""; {
		f := c.next(ctx, t)
		switch f.label {
		case "AUTH":
			json.Unmarshal(f.raw[1], &challenge)
		case "OK":
			var reason string
			json.Unmarshal(f.raw[3], &reason)
			if string(f.raw[2]) != "false" || !strings.HasPrefix(reason, "auth-required:") {
				t.Fatalf("protected event without AUTH: %s", f.raw)
			}
			refused = true
		}
	}
	auth := signed(t, sk, time.Now().Unix(), 22242, gonostr.Tags{{"relay", url}, {"challenge", challenge}}, "")
	if err := c.write(ctx, "AUTH", auth); err != nil {
		t.Fatal(err)
	}
	for {
		f := c.next(ctx, t)
		if f.label == "OK" {
			if string(f.raw[2]) != "true" {
				t.Fatalf("AUTH refused: %s", f.raw)
			}
			break
		}
	}
	if err := c.Publish(ctx, ev); err != nil {
		t.Errorf("protected event after AUTH: %v", err)
	}
}
