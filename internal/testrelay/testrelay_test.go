package testrelay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	gonostr "github.com/nbd-wtf/go-nostr"

	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/nostr"
)

// deadline bounds every wait in these tests; it is generous on purpose.
const deadline = 10 * time.Second

type client struct {
	t  *testing.T
	ws *websocket.Conn
}

func dial(t *testing.T, r *Relay) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, r.URL(), nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	ws.SetReadLimit(1 << 22)
	t.Cleanup(func() { ws.CloseNow() })
	return &client{t: t, ws: ws}
}

func (c *client) send(v ...any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// sendEvents sends an EVENT of each of evs without waiting for the OKs and
// returns when the sending began.
func (c *client) sendEvents(evs []*nostr.Event) time.Time {
	c.t.Helper()
	start := time.Now()
	for _, ev := range evs {
		c.send("EVENT", ev)
	}
	return start
}

func (c *client) readRaw() ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	_, b, err := c.ws.Read(ctx)
	return b, err
}

// read returns the next frame as a JSON array, failing on anything else.
func (c *client) read() []json.RawMessage {
	c.t.Helper()
	b, err := c.readRaw()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var m []json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || len(m) == 0 {
		c.t.Fatalf("malformed frame %q", b)
	}
	return m
}

func str(raw json.RawMessage) string {
	var s string
	json.Unmarshal(raw, &s)
	return s
}

// expectOK reads the next frame and checks it is an OK for id.
func (c *client) expectOK(id string, wantOK bool, reasonPrefix string) {
	c.t.Helper()
	m := c.read()
	if str(m[0]) != "OK" || len(m) != 4 {
		c.t.Fatalf("want OK, got %s", join(m))
	}
	var ok bool
	json.Unmarshal(m[2], &ok)
	if str(m[1]) != id || ok != wantOK || !strings.HasPrefix(str(m[3]), reasonPrefix) {
		c.t.Fatalf("OK for %s: got %s, want ok=%v reason %q…", id[:8], join(m), wantOK, reasonPrefix)
	}
}

// readEvents reads EVENT frames for sub until EOSE.
func (c *client) readEvents(sub string) []*nostr.Event {
	c.t.Helper()
	var out []*nostr.Event
	for {
		m := c.read()
		switch str(m[0]) {
		case "EOSE":
			return out
		case "EVENT":
			if str(m[1]) != sub {
				c.t.Fatalf("event for subscription %q, want %q", str(m[1]), sub)
			}
			ev, err := nostr.ParseEvent(m[2])
			if err != nil {
				c.t.Fatal(err)
			}
			out = append(out, ev)
		default:
			c.t.Fatalf("unexpected frame %s", join(m))
		}
	}
}

func join(m []json.RawMessage) string {
	b, _ := json.Marshal(m)
	return string(b)
}

var testKey = gonostr.GeneratePrivateKey()

func event(t *testing.T, createdAt int64, kind int, content string, tags ...nostr.Tag) *nostr.Event {
	t.Helper()
	gt := make(gonostr.Tags, len(tags))
	for i, tg := range tags {
		gt[i] = gonostr.Tag(tg)
	}
	g := gonostr.Event{CreatedAt: gonostr.Timestamp(createdAt), Kind: kind, Tags: gt, Content: content}
	if err := g.Sign(testKey); err != nil {
		t.Fatal(err)
	}
	return fromGo(&g)
}

func events(t *testing.T, n int) []*nostr.Event {
	now := time.Now().Unix()
	out := make([]*nostr.Event, n)
	for i := range out {
		out[i] = event(t, now-int64(n-i), 1, fmt.Sprintf("event %d", i))
	}
	return out
}

func validSig(ev *nostr.Event) bool {
	ok, err := toGo(ev).CheckSignature()
	return err == nil && ok
}

func TestPublishQueryLive(t *testing.T) {
	r := Start(t, Config{Verify: true})
	pub, subc := dial(t, r), dial(t, r)
	evs := events(t, 3)
	for _, ev := range evs {
		pub.send("EVENT", ev)
		pub.expectOK(ev.ID, true, "")
	}
	pub.send("EVENT", evs[0])
	pub.expectOK(evs[0].ID, true, "duplicate:")

	subc.send("REQ", "q", map[string]any{"authors": []string{evs[0].PubKey}, "limit": 2})
	got := subc.readEvents("q")
	if len(got) != 2 || got[0].ID != evs[2].ID || got[1].ID != evs[1].ID {
		t.Fatalf("limit 2: got %d events, want the 2 newest, newest first", len(got))
	}

	live := event(t, time.Now().Unix(), 1, "live")
	pub.send("EVENT", live)
	pub.expectOK(live.ID, true, "")
	m := subc.read()
	if str(m[0]) != "EVENT" || str(m[1]) != "q" || !strings.Contains(string(m[2]), live.ID) {
		t.Fatalf("live delivery: got %s", join(m))
	}

	// After CLOSE nothing more is delivered: publishing on the subscriber's
	// own connection, a delivery would arrive before the OK.
	subc.send("CLOSE", "q")
	after := event(t, time.Now().Unix(), 1, "after close")
	subc.send("EVENT", after)
	subc.expectOK(after.ID, true, "")

	bad := event(t, time.Now().Unix(), 1, "bad sig")
	bad.Sig = flipHex(bad.Sig)
	pub.send("EVENT", bad)
	pub.expectOK(bad.ID, false, "invalid:")
	badID := event(t, time.Now().Unix(), 1, "bad id")
	badID.Content = "changed"
	pub.send("EVENT", badID)
	pub.expectOK(badID.ID, false, "invalid:")

	st := r.Stats()
	if st.Stored != 5 || st.Duplicates != 1 || st.Refused != 2 || st.REQs != 1 || st.Closes != 1 || st.Connections != 2 {
		t.Errorf("stats: %+v", st)
	}
	if !r.Has(live.ID) || r.Has(bad.ID) || len(r.Stored()) != 5 {
		t.Errorf("stored: has(live)=%v has(bad)=%v n=%d", r.Has(live.ID), r.Has(bad.ID), len(r.Stored()))
	}
}

func TestMaxLimitAndNIP11(t *testing.T) {
	r, c, got := answered(t, Config{MaxLimit: 3}, 5, "all")
	if len(got) != 3 {
		t.Errorf("no limit: got %d events, want the cap 3", len(got))
	}
	c.send("REQ", "big", map[string]any{"kinds": []int{1}, "limit": 100})
	if got := c.readEvents("big"); len(got) != 3 {
		t.Errorf("limit 100: got %d events, want the cap 3", len(got))
	}
	var doc struct {
		Limitation struct {
			MaxLimit int `json:"max_limit"`
		} `json:"limitation"`
	}
	if status, err := getNIP11(r, &doc); status != 200 || err != nil || doc.Limitation.MaxLimit != 3 {
		t.Errorf("NIP-11 max_limit: got %d (HTTP %d, %v), want 3", doc.Limitation.MaxLimit, status, err)
	}
	r2 := Start(t, Config{NoNIP11: true})
	if status, _ := getNIP11(r2, nil); status != 404 {
		t.Errorf("NoNIP11: status %d", status)
	}
}

// getNIP11 requests r's information document, decoding it into doc
// (unless nil), and returns the HTTP status.
func getNIP11(r *Relay, doc any) (int, error) {
	resp, err := nip11.Get(context.Background(), r.URL())
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if doc == nil {
		_, err = io.Copy(io.Discard, resp.Body)
	} else {
		err = json.NewDecoder(resp.Body).Decode(doc)
	}
	return resp.StatusCode, err
}

func TestDropAndRefuse(t *testing.T) {
	r := Start(t, Config{DropEvery: 2, RefuseEvery: 3, RefuseReason: "rate-limited: slow down"})
	c := dial(t, r)
	evs := events(t, 6)
	// 1 stored, 2 dropped, 3 refused, 4 dropped, 5 stored, 6 refused.
	want := []struct {
		ok     bool
		reason string
		stored bool
	}{{true, "", true}, {true, "", false}, {false, "rate-limited: slow down", false}, {true, "", false}, {true, "", true}, {false, "rate-limited:", false}}
	for i, ev := range evs {
		c.send("EVENT", ev)
		c.expectOK(ev.ID, want[i].ok, want[i].reason)
	}
	for i, ev := range evs {
		if r.Has(ev.ID) != want[i].stored {
			t.Errorf("event %d: stored=%v, want %v", i+1, r.Has(ev.ID), want[i].stored)
		}
	}
	if rec := r.Received(); len(rec) != 6 || rec[2] != evs[2].ID {
		t.Errorf("received ids: %d", len(rec))
	}
	if st := r.Stats(); st.Dropped != 2 || st.Refused != 2 || st.Stored != 2 || st.OKs != 6 {
		t.Errorf("stats: %+v", st)
	}
}

func TestOKDelayPipelines(t *testing.T) {
	const delay = time.Second
	const n = 10
	r := Start(t, Config{OKDelay: delay})
	c := dial(t, r)
	evs := events(t, n)
	start := c.sendEvents(evs)
	for i, ev := range evs {
		c.expectOK(ev.ID, true, "")
		if i == 0 && time.Since(start) < delay {
			t.Errorf("first OK after %v, want at least %v", time.Since(start), delay)
		}
	}
	// Served one at a time this takes at least n*delay = 10 s whatever the
	// machine's load; pipelined, about one delay.
	if el := time.Since(start); el >= n*delay {
		t.Errorf("%d OKs took %v: the delays were not overlapped", n, el)
	}
}

func TestNeverOK(t *testing.T) {
	r := Start(t, Config{NeverOK: true})
	c := dial(t, r)
	ev := events(t, 1)[0]
	c.send("EVENT", ev)
	c.send("REQ", "q", map[string]any{"ids": []string{ev.ID}})
	// Messages are handled in order, so an OK would come before the results.
	got := c.readEvents("q")
	if len(got) != 1 || got[0].ID != ev.ID {
		t.Fatalf("got %d events, want the stored event", len(got))
	}
	if st := r.Stats(); st.OKs != 0 || st.Stored != 1 {
		t.Errorf("stats: %+v", st)
	}
}

func TestExtraEvents(t *testing.T) {
	_, c, ev := oneStored(t, Config{ExtraEvents: 2})
	f := nostr.Filter{IDs: []string{ev.ID}}
	c.send("REQ", "q", f)
	got := c.readEvents("q")
	if len(got) != 3 {
		t.Fatalf("got %d events, want 1 + 2 extra", len(got))
	}
	outside := 0
	for _, e := range got {
		if !e.CheckID() || !validSig(e) {
			t.Errorf("extra event %s is not valid", e.ID[:8])
		}
		if !f.Matches(e) {
			outside++
		}
	}
	if outside != 2 {
		t.Errorf("%d events outside the filter, want 2", outside)
	}
}

func TestInvalidEvents(t *testing.T) {
	_, _, got := answered(t, Config{InvalidEvery: 1}, 2, "q")
	if len(got) != 2 {
		t.Fatalf("got %d events", len(got))
	}
	// First corrupted by id, second by signature.
	if got[0].CheckID() {
		t.Error("first event: id still valid")
	}
	if !got[1].CheckID() || validSig(got[1]) {
		t.Errorf("second event: id valid=%v sig valid=%v, want a valid id and a bad signature", got[1].CheckID(), validSig(got[1]))
	}
}

func TestNoEOSE(t *testing.T) {
	r := Start(t, Config{NoEOSE: true})
	evs := events(t, 2)
	r.Add(evs[0])
	c := dial(t, r)
	c.send("REQ", "q", map[string]any{"kinds": []int{1}})
	c.send("EVENT", evs[1])
	// The REQ is answered before the EVENT: an EOSE would come before the OK.
	// The live subscription also delivers evs[1] before its OK.
	var labels []string
	for len(labels) == 0 || labels[len(labels)-1] != "OK" {
		labels = append(labels, str(c.read()[0]))
	}
	if strings.Join(labels, ",") != "EVENT,EVENT,OK" {
		t.Errorf("frames: %v, want EVENT,EVENT,OK and no EOSE", labels)
	}
}

func TestGarbage(t *testing.T) {
	r, c, _ := sentEvents(t, Config{GarbageEvery: 2}, 4)
	var kinds []string
	for i := 0; i < 6; i++ {
		b, err := c.readRaw()
		if err != nil {
			t.Fatal(err)
		}
		var m []json.RawMessage
		if json.Unmarshal(b, &m) != nil || len(m) != 4 {
			kinds = append(kinds, "garbage")
		} else {
			kinds = append(kinds, str(m[0]))
		}
	}
	if got := strings.Join(kinds, ","); got != "OK,OK,garbage,OK,OK,garbage" {
		t.Errorf("frames: %s", got)
	}
	if r.Stats().Garbage != 2 {
		t.Errorf("garbage count %d", r.Stats().Garbage)
	}
}

func TestCloseAfter(t *testing.T) {
	r, c, evs := sentEvents(t, Config{CloseAfter: 3}, 3)
	c.expectOK(evs[0].ID, true, "")
	c.expectOK(evs[1].ID, true, "")
	if b, err := c.readRaw(); err == nil {
		t.Fatalf("after the 3rd message: got %q, want the connection closed", b)
	}
	if r.Has(evs[2].ID) || r.Stats().AbruptCloses != 1 {
		t.Errorf("3rd event stored=%v abrupt closes=%d", r.Has(evs[2].ID), r.Stats().AbruptCloses)
	}
}

func TestDeliveryFaults(t *testing.T) {
	r, c, got := answered(t, Config{DropDeliveriesEvery: 2, DuplicateDeliveriesEvery: 3}, 0, "live")
	if len(got) != 0 {
		t.Fatalf("empty relay returned %d events", len(got))
	}
	evs := events(t, 6)
	r.Add(evs...)
	// Deliveries 2, 4, 6 dropped; 3 sent twice. A second REQ's EOSE marks
	// the end of what was delivered.
	var contents []string
	for _, m := range c.untilMarker() {
		ev, _ := nostr.ParseEvent(m[2])
		contents = append(contents, ev.Content)
	}
	if s := strings.Join(contents, ","); s != "event 0,event 2,event 2,event 4" {
		t.Errorf("deliveries: %s", s)
	}
	st := r.Stats()
	if st.DeliveriesDropped != 3 || st.DeliveriesDuplicated != 1 || st.Deliveries != 4 {
		t.Errorf("stats: %+v", st)
	}
}

func TestDelayDeliveries(t *testing.T) {
	const d = 300 * time.Millisecond
	r, c, _ := answered(t, Config{DelayDeliveries: d}, 0, "live")
	start := time.Now()
	ev := events(t, 1)[0]
	r.Add(ev)
	m := c.read()
	if el := time.Since(start); el < d {
		t.Errorf("delivered after %v, want at least %v", el, d)
	}
	if str(m[0]) != "EVENT" || !strings.Contains(string(m[2]), ev.ID) {
		t.Errorf("got %s", join(m))
	}
}

func TestCapacityQueues(t *testing.T) {
	const pt = 50 * time.Millisecond
	const workers, n = 2, 10
	r := Start(t, Config{ProcessingTime: pt, Workers: workers})
	c := dial(t, r)
	evs := events(t, n)
	start := c.sendEvents(evs)
	seen := map[string]bool{}
	for len(seen) < n {
		m := c.read()
		if str(m[0]) != "OK" {
			t.Fatalf("got %s", join(m))
		}
		seen[str(m[1])] = true
	}
	// n events through 2 workers of 50 ms each take at least 250 ms.
	if el := time.Since(start); el < n/workers*pt {
		t.Errorf("%d events processed in %v, faster than capacity allows (%v)", n, el, n/workers*pt)
	}
	if st := r.Stats(); st.Stored != n {
		t.Errorf("stored %d", st.Stored)
	}
}

func TestCloseDisconnects(t *testing.T) {
	r := New(Config{NeverOK: true})
	c := dial(t, r)
	c.send("EVENT", events(t, 1)[0])
	r.Close()
	if _, err := c.readRaw(); err == nil {
		t.Error("connection still open after Close")
	}
	r.Close() // idempotent
}

// waitFor polls cond until it holds, failing the test after deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// oneStored starts a relay of cfg holding one event and dials it: the
// relay (closed when the test ends), the client and the event.
func oneStored(t *testing.T, cfg Config) (*Relay, *client, *nostr.Event) {
	t.Helper()
	r := Start(t, cfg)
	stored := events(t, 1)[0]
	r.Add(stored)
	return r, dial(t, r), stored
}

// sentEvents starts a relay of cfg, dials it and sends n events without
// waiting for their OKs: the relay (closed when the test ends), the client
// and the events.
func sentEvents(t *testing.T, cfg Config, n int) (*Relay, *client, []*nostr.Event) {
	t.Helper()
	r := Start(t, cfg)
	c := dial(t, r)
	evs := events(t, n)
	c.sendEvents(evs)
	return r, c, evs
}

// answered starts a relay of cfg holding n events, dials it and sends REQ
// sub for kind 1: the relay (closed when the test ends), the client and
// the stored answer.
func answered(t *testing.T, cfg Config, n int, sub string) (*Relay, *client, []*nostr.Event) {
	t.Helper()
	r := Start(t, cfg)
	r.Add(events(t, n)...)
	c := dial(t, r)
	c.send("REQ", sub, map[string]any{"kinds": []int{1}})
	return r, c, c.readEvents(sub)
}

// untilMarker sends REQ "marker" for kind 7, which no test event has: its
// EOSE marks the end of what was delivered before. It returns the frames
// that came before that EOSE.
func (c *client) untilMarker() [][]json.RawMessage {
	c.t.Helper()
	c.send("REQ", "marker", map[string]any{"kinds": []int{7}})
	return c.readUntilEOSE("marker")
}

// readUntilEOSE reads frames until the EOSE of sub, returning the frames
// before it.
func (c *client) readUntilEOSE(sub string) [][]json.RawMessage {
	c.t.Helper()
	var out [][]json.RawMessage
	for {
		m := c.read()
		if str(m[0]) == "EOSE" && str(m[1]) == sub {
			return out
		}
		out = append(out, m)
	}
}

// expectDead checks that the connection ends abruptly: a read fails without
// a close frame.
func (c *client) expectDead() {
	c.t.Helper()
	b, err := c.readRaw()
	if err == nil {
		c.t.Fatalf("got %q, want the connection closed", b)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		c.t.Fatalf("connection still open after %v", deadline)
	}
	if code := websocket.CloseStatus(err); code != -1 {
		c.t.Fatalf("got a close frame (status %d), want an abrupt close", code)
	}
}

// expectRefused checks that a new connection to r is refused.
func expectRefused(t *testing.T, r *Relay) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, r.URL(), nil)
	if err == nil {
		ws.CloseNow()
		t.Fatal("dial succeeded, want connection refused")
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial: %v, want connection refused", err)
	}
}

func TestInvalidDeliveries(t *testing.T) {
	r, c, got := answered(t, Config{InvalidDeliveriesEvery: 2}, 4, "live")
	if len(got) != 4 {
		t.Fatalf("got %d query results, want 4", len(got))
	}
	for i, ev := range got {
		if !ev.CheckID() || !validSig(ev) {
			t.Errorf("query result %d corrupted", i+1)
		}
	}
	now := time.Now().Unix()
	for i := 0; i < 4; i++ {
		r.Add(event(t, now, 1, fmt.Sprintf("live %d", i)))
	}
	// Add delivers before returning: the marker's EOSE comes after.
	frames := c.untilMarker()
	if len(frames) != 4 {
		t.Fatalf("got %d live frames, want 4", len(frames))
	}
	// Deliveries 2 and 4 corrupted: first by signature, then by id.
	want := []string{"valid", "bad sig", "valid", "bad id"}
	for i, m := range frames {
		ev, err := nostr.ParseEvent(m[2])
		if err != nil || str(m[0]) != "EVENT" || str(m[1]) != "live" {
			t.Fatalf("frame %d: %s", i+1, join(m))
		}
		state := "valid"
		switch {
		case !ev.CheckID():
			state = "bad id"
		case !validSig(ev):
			state = "bad sig"
		}
		if !strings.HasPrefix(ev.Content, fmt.Sprintf("live %d", i)) || state != want[i] {
			t.Errorf("delivery %d: %q %s, want \"live %d\" %s", i+1, ev.Content, state, i, want[i])
		}
	}
	if st := r.Stats(); st.InvalidDeliveries != 2 || st.Deliveries != 4 || st.QueryResults != 4 {
		t.Errorf("stats: %+v", st)
	}
}

func TestWrongFilterDeliveries(t *testing.T) {
	r := Start(t, Config{WrongFilterDeliveriesEvery: 2})
	c1, c2 := dial(t, r), dial(t, r)
	filters := map[string]nostr.Filter{"k1": {Kinds: []int{1}}, "k2": {Kinds: []int{2}}, "k3": {Kinds: []int{3}}}
	for _, sub := range []string{"k1", "k2"} {
		c1.send("REQ", sub, filters[sub])
		c1.readEvents(sub)
	}
	c2.send("REQ", "k3", filters["k3"])
	c2.readEvents("k3")

	now := time.Now().Unix()
	evs := []*nostr.Event{
		event(t, now, 1, "e1"), event(t, now, 1, "e2"),
		event(t, now, 2, "e3"), event(t, now, 2, "e4"),
	}
	r.Add(evs...)
	// Broadcasts 2 (e2) and 4 (e4) also go to every live subscription
	// they do not match.
	want := map[string]bool{
		"k1 e1": true, "k1 e2": true, "k2 e2": true, "k3 e2": true,
		"k2 e3": true, "k2 e4": true, "k1 e4": true, "k3 e4": true,
	}
	got := map[string]bool{}
	for _, c := range []*client{c1, c2} {
		for _, m := range c.untilMarker() {
			ev, err := nostr.ParseEvent(m[2])
			if err != nil || str(m[0]) != "EVENT" {
				t.Fatalf("frame %s", join(m))
			}
			if !ev.CheckID() || !validSig(ev) {
				t.Errorf("delivery of %s to %s is not a valid event", ev.Content, str(m[1]))
			}
			key := str(m[1]) + " " + ev.Content
			if got[key] {
				t.Errorf("%s delivered twice", key)
			}
			got[key] = true
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("deliveries:\n got %v\nwant %v", got, want)
	}
	if st := r.Stats(); st.WrongFilterDeliveries != 4 || st.Deliveries != 8 {
		t.Errorf("stats: %+v", st)
	}
}

func TestRateLimitEvents(t *testing.T) {
	for _, reason := range []string{"", "blocked: custom"} {
		r := New(Config{RateLimitAfter: 2, RateLimitReason: reason})
		if reason == "" {
			reason = "rate-limited: slow down"
		}
		c := dial(t, r)
		evs := events(t, 5)
		for i, ev := range evs[:4] {
			c.send("EVENT", ev)
			if i < 2 {
				c.expectOK(ev.ID, true, "")
			} else {
				c.expectOK(ev.ID, false, reason)
			}
		}
		// The limit is per connection.
		c2 := dial(t, r)
		c2.send("EVENT", evs[4])
		c2.expectOK(evs[4].ID, true, "")
		for i, ev := range evs {
			if r.Has(ev.ID) != (i != 2 && i != 3) {
				t.Errorf("event %d stored=%v", i+1, r.Has(ev.ID))
			}
		}
		if st := r.Stats(); st.RateLimited != 2 || st.Refused != 2 || st.Stored != 3 || st.OKs != 5 {
			t.Errorf("stats: %+v", st)
		}
		r.Close()
	}
}

func TestRateLimitREQs(t *testing.T) {
	r, c, stored := oneStored(t, Config{RateLimitREQAfter: 2})
	for _, sub := range []string{"q1", "q2"} {
		c.send("REQ", sub, map[string]any{"ids": []string{stored.ID}})
		if got := c.readEvents(sub); len(got) != 1 {
			t.Fatalf("%s: got %d events, want 1", sub, len(got))
		}
	}
	for _, sub := range []string{"q3", "q4"} {
		c.send("REQ", sub, map[string]any{"kinds": []int{1}})
		m := c.read()
		if join(m) != `["CLOSED","`+sub+`","rate-limited: slow down"]` {
			t.Fatalf("%s: got %s, want CLOSED rate-limited", sub, join(m))
		}
	}
	// Neither results, EOSE nor live deliveries follow: messages are
	// handled in order, and a new kind 1 event would be delivered to a
	// live q3 or q4 before its OK.
	live := event(t, time.Now().Unix(), 1, "live")
	c.send("EVENT", live)
	c.expectOK(live.ID, true, "")
	c2 := dial(t, r)
	c2.send("REQ", "other", map[string]any{"ids": []string{stored.ID}})
	if got := c2.readEvents("other"); len(got) != 1 {
		t.Errorf("another connection's first REQ: got %d events, want 1", len(got))
	}
	if st := r.Stats(); st.RateLimitedREQs != 2 || st.REQs != 5 {
		t.Errorf("stats: %+v", st)
	}
}

func TestKill(t *testing.T) {
	r := New(Config{})
	c1, c2 := dial(t, r), dial(t, r)
	c1.send("REQ", "live", map[string]any{"kinds": []int{1}})
	c1.readEvents("live")
	ev := events(t, 1)[0]
	c2.send("EVENT", ev)
	c2.expectOK(ev.ID, true, "")
	c1.read() // the live delivery

	returnsWithin(t, "Kill", func() { r.Kill(); r.Kill() })
	c1.expectDead()
	c2.expectDead()
	expectRefused(t, r)
	if st := r.Stats(); !st.Killed || st.Stored != 1 || !r.Has(ev.ID) {
		t.Errorf("after Kill: stats %+v", st)
	}

	returnsWithin(t, "Close after Kill", func() { r.Close(); r.Close() })
}

// returnsWithin fails unless f, called on a goroutine of its own, returns
// within the deadline (a hang guard); what names it.
func returnsWithin(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(deadline):
		t.Fatalf("%s blocked", what)
	}
}

func TestKillAfterEvents(t *testing.T) {
	for _, workers := range []int{0, 2} {
		r := New(Config{KillAfterEvents: 3, Workers: workers})
		c := dial(t, r)
		evs := events(t, 3)
		for _, ev := range evs[:2] {
			c.send("EVENT", ev)
			c.expectOK(ev.ID, true, "")
		}
		c.send("EVENT", evs[2])
		c.expectDead()
		expectRefused(t, r)
		st := r.Stats()
		if !st.Killed || st.Events != 3 || st.OKs != 2 || st.Stored != 2 || r.Has(evs[2].ID) {
			t.Errorf("workers=%d: stats %+v, 3rd stored=%v", workers, st, r.Has(evs[2].ID))
		}
		r.Close()
	}
}

func TestNoEOSEAfter(t *testing.T) {
	r, c, stored := oneStored(t, Config{NoEOSEAfter: 2})
	byID := map[string]any{"ids": []string{stored.ID}}
	c.send("REQ", "q1", byID)
	c.readEvents("q1")
	c.send("REQ", "q2", byID)
	c.readEvents("q2")
	c.send("REQ", "q3", byID)
	c.send("REQ", "q4", byID)
	ev := event(t, time.Now().Unix(), 1, "new")
	c.send("EVENT", ev)
	// Messages are handled in order: any EOSE for q3 or q4 would come
	// before the OK. The new event matches none of the subscriptions.
	var frames []string
	for {
		m := c.read()
		frames = append(frames, str(m[0])+" "+str(m[1]))
		if str(m[0]) == "OK" {
			break
		}
	}
	if got := strings.Join(frames, ","); got != "EVENT q3,EVENT q4,OK "+ev.ID {
		t.Errorf("frames: %s, want the results of q3 and q4, no EOSE, then the OK", got)
	}
	// Per connection: another one gets its first EOSEs.
	c2 := dial(t, r)
	c2.send("REQ", "q1", byID)
	if got := c2.readEvents("q1"); len(got) != 1 {
		t.Errorf("another connection: got %d events", len(got))
	}
	if st := r.Stats(); st.EOSEsWithheld != 2 {
		t.Errorf("stats: %+v", st)
	}
}

func TestNeverOKAfter(t *testing.T) {
	r := Start(t, Config{NeverOKAfter: 2})
	c, c2 := dial(t, r), dial(t, r)
	evs := events(t, 5)
	for _, ev := range evs[:2] {
		c.send("EVENT", ev)
		c.expectOK(ev.ID, true, "")
	}
	// Relay-wide: 3 and 4 on this connection, 5 on another, are stored
	// but not answered; an OK would come before the query's results.
	c.send("EVENT", evs[2])
	c.send("EVENT", evs[3])
	c.send("REQ", "q", map[string]any{"ids": []string{evs[2].ID, evs[3].ID}})
	if got := c.readEvents("q"); len(got) != 2 {
		t.Errorf("got %d events, want events 3 and 4 stored", len(got))
	}
	c2.send("EVENT", evs[4])
	c2.send("REQ", "q", map[string]any{"ids": []string{evs[4].ID}})
	if got := c2.readEvents("q"); len(got) != 1 {
		t.Errorf("got %d events, want event 5 stored", len(got))
	}
	if st := r.Stats(); st.OKs != 2 || st.Unanswered != 3 || st.Stored != 5 {
		t.Errorf("stats: %+v", st)
	}
}

func TestStallAfter(t *testing.T) {
	r := New(Config{StallAfter: 3})
	c1, c2 := dial(t, r), dial(t, r)
	evs := events(t, 3)
	c1.send("EVENT", evs[0])
	c1.expectOK(evs[0].ID, true, "")
	c1.send("REQ", "q", map[string]any{"kinds": []int{7}})
	c1.readEvents("q")
	c2.send("EVENT", evs[1])
	c2.expectOK(evs[1].ID, true, "")
	// Three messages handled: from now on, nothing is.
	c1.send("EVENT", evs[2])
	c2.send("REQ", "q", map[string]any{"kinds": []int{1}})
	waitFor(t, "both messages to be held", func() bool { return r.Stats().Stalled == 2 })
	// Once held, a message is never handled, so nothing can follow; the
	// short wait only confirms it.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, b, err := c1.ws.Read(ctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("stalled connection: got %q, %v; want nothing, connection open", b, err)
	}
	if r.Has(evs[2].ID) {
		t.Error("event received after the stall was stored")
	}
	if st := r.Stats(); st.Messages != 5 || st.Events != 2 || st.REQs != 1 || st.OKs != 2 {
		t.Errorf("stats: %+v", st)
	}
	// The connection is held open until Close.
	r.Close()
	c2.expectDead()
}
