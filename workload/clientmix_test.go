package workload

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/wire"
)

func TestParseMix(t *testing.T) {
	for in, want := range map[string][]string{
		"":                    Shapes,
		"reference":           Shapes,
		"clients":             ClientShapes,
		"all":                 append(slices.Clone(Shapes), ClientShapes...),
		"home, thread,home":   {"home", "thread"},
		"kind,addressable":    {"kind", "addressable"},
		"notifications,ids,,": {"notifications", "ids"},
	} {
		got, err := ParseMix(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseMix(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"nosuch", "home,feed", ","} {
		if _, err := ParseMix(bad); err == nil {
			t.Errorf("ParseMix(%q): no error", bad)
		}
	}
}

// checkClientShape checks the size of a client shape's filter f (the
// reference shapes have none to check).
func checkClientShape(t *testing.T, s string, f nostr.Filter) {
	t.Helper()
	switch s {
	case "ids":
		if len(f.IDs) != batchIDs || f.Limit != batchIDs {
			t.Fatalf("ids: %d ids, limit %d", len(f.IDs), f.Limit)
		}
	case "profiles":
		if len(f.Authors) == 0 || len(f.Authors) > profileAuthors || !slices.Equal(f.Kinds, []int{0}) {
			t.Fatalf("profiles: %s", f.AppendJSON(nil))
		}
	case "home":
		if len(f.Authors) == 0 || len(f.Authors) > homeAuthors {
			t.Fatalf("home: %d authors", len(f.Authors))
		}
	case "reactions":
		if !slices.Equal(f.Kinds, []int{7, 9735}) || len(f.Tags["e"]) != 1 {
			t.Fatalf("reactions: %s", f.AppendJSON(nil))
		}
	case "addressable":
		if len(f.Tags["d"]) != 1 || len(f.Authors) != 1 || f.Limit != 1 {
			t.Fatalf("addressable: %s", f.AppendJSON(nil))
		}
	}
}

// wantClientPhase checks a client-mix phase that should have passed: every
// query accounted for and answered, every shape a group with verified,
// non-empty answers and both latencies.
func wantClientPhase(t *testing.T, q results.Phase, queries int) {
	t.Helper()
	a := q.Account(results.OpQuery)
	if a == nil || !a.Balanced() || a.Requested != int64(queries) || a.Accepted != int64(queries) {
		t.Fatalf("account %+v", a)
	}
	v := q.Verification
	if v == nil || !v.Verified || !v.Passed || v.Checked != int64(queries) || v.Missing != 0 || v.Extra != 0 {
		t.Fatalf("verification %+v", v)
	}
	if q.Counts["queries"] != int64(queries) || len(q.Groups) != len(ClientShapes) {
		t.Fatalf("queries %d groups %d", q.Counts["queries"], len(q.Groups))
	}
	if q.Rates["events_returned_per_sec"] <= 0 || q.Rates["queries_per_sec"] <= 0 {
		t.Fatalf("rates %v", q.Rates)
	}
	var sum int64
	for i, g := range q.Groups {
		if g.Name != ClientShapes[i] {
			t.Errorf("group %d is %s, want %s", i, g.Name, ClientShapes[i])
		}
		sum += g.Counts["queries"]
		if g.Counts["events_returned"] == 0 || g.Verification == nil || !g.Verification.Passed || g.Verification.Returned == 0 {
			t.Errorf("shape %s: counts %v verification %+v", g.Name, g.Counts, g.Verification)
		}
		if g.Latency["eose"] == nil || g.Latency["eose"].Count != g.Counts["queries"] || g.Latency["first_event"] == nil {
			t.Errorf("shape %s: latency %v", g.Name, g.Latency)
		}
		if g.Rates["events_returned_per_sec"] <= 0 {
			t.Errorf("shape %s: rates %v", g.Name, g.Rates)
		}
	}
	if sum != int64(queries) {
		t.Fatalf("groups hold %d queries of %d", sum, queries)
	}
}

func TestClientMixEmbeddedRelay(t *testing.T) {
	for _, conns := range []int{1, 3} {
		url := embeddedURL(t, "native")
		_, q := publishAndQuery(t, url, ModePipeline, QueryOptions{Queries: 45, Connections: conns, Shapes: ClientShapes, Name: "clients"})
		if q.Name != "clients" || q.Workload != "query" {
			t.Fatalf("phase %q (%q)", q.Name, q.Workload)
		}
		wantClientPhase(t, q, 45)
		if len(q.Notes) > 0 {
			t.Errorf("notes %v", q.Notes)
		}
	}
}

// A relay that answers OK but drops every 7th event: the shapes' answers
// miss accepted events, and verification fails.
func TestClientMixDroppedEventsFail(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{DropEvery: 7})
	_, q := publishAndQuery(t, r.URL(), ModePipeline, QueryOptions{Queries: 45, Shapes: ClientShapes})
	v := q.Verification
	if v.Missing == 0 || v.Passed {
		t.Fatalf("dropped events not detected: %+v", v)
	}
	failed := 0
	for _, g := range q.Groups {
		if !g.Verification.Passed {
			failed++
		}
	}
	if failed < 3 {
		t.Fatalf("only %d shapes failed verification", failed)
	}
	if a := q.Account(results.OpQuery); a == nil || !a.Balanced() || a.Accepted != 45 {
		t.Fatalf("account %+v", a)
	}
}

// A dump without kind-3 events: the home shape is skipped in one line and
// the others share the queries.
func TestClientMixSkipsWhatTheCorpusLacks(t *testing.T) {
	url := embeddedURL(t, "native")
	c := smallCorpus(t)
	var idx []int
	var evs []*nostr.Event
	for i, e := range c.Events {
		if e.Kind != 3 {
			idx = append(idx, i)
			evs = append(evs, e)
		}
	}
	if _, err := Publish(testCtx(t), url, c, idx, PublishOptions{Connections: 2, Mode: ModePipeline}); err != nil {
		t.Fatal(err)
	}
	m := verify.NewModel(evs)
	q, err := Query(testCtx(t), url, m, m.Live, QueryOptions{Base: Base{Seed: 2}, Queries: 16, Shapes: ClientShapes})
	if err != nil {
		t.Fatal(err)
	}
	want := "shape home skipped: corpus has no kind-3 event following an author who posted"
	if !slices.Contains(q.Notes, want) {
		t.Fatalf("notes %v", q.Notes)
	}
	if q.Counts["queries"] != 16 || len(q.Groups) != len(ClientShapes)-1 || !q.Verification.Passed {
		t.Fatalf("queries %d groups %d verification %+v", q.Counts["queries"], len(q.Groups), q.Verification)
	}
	for _, g := range q.Groups {
		if g.Name == "home" || strings.Contains(g.Name, ",") {
			t.Fatalf("group %s", g.Name)
		}
	}
}

// The thread and home shapes send several filters in one REQ, as clients
// do, each drawn so that it hits: thread the root by id beside its replies,
// home the followed hashtags beside the followed authors, where a note by
// a followed author with a followed tag matches both (some such note is
// in the corpus). The other shapes send one filter.
func TestClientShapesSendSeveralFilters(t *testing.T) {
	c := smallCorpus(t).Events
	m := verify.NewModel(c)
	recs, skipped, err := buildMix(c, QueryOptions{Queries: 90, Limit: 100, Shapes: ClientShapes})
	if err != nil || len(skipped) > 0 || len(recs) != 90 {
		t.Fatalf("%d queries, skipped %v, %v", len(recs), skipped, err)
	}
	both := 0
	for _, r := range recs {
		fs := r.req()
		want := 1
		if r.shape == "thread" || r.shape == "home" {
			want = 2
		}
		if len(fs) != want {
			t.Fatalf("%s: %d filters, want %d", r.shape, len(fs), want)
		}
		for i := range fs {
			if _, all := m.Expected(&fs[i], 0); len(all) == 0 {
				t.Fatalf("%s: filter %s matches nothing", r.shape, fs[i].AppendJSON(nil))
			}
		}
		if r.shape == "thread" && (len(fs[0].IDs) != 1 || fs[0].IDs[0] != fs[1].Tags["e"][0]) {
			t.Fatalf("thread: %s %s", fs[0].AppendJSON(nil), fs[1].AppendJSON(nil))
		}
		if r.shape == "home" {
			_, a := m.Expected(&fs[0], 0)
			for _, e := range a {
				if fs[1].Matches(e) {
					both++
				}
			}
		}
	}
	if both == 0 {
		t.Fatal("no home REQ has an event matching both its filters")
	}
	// Segments for relaybench merge send the same REQs (merge judges
	// several filters as their union) and record every filter.
	seg, _, _ := buildMix(c, QueryOptions{Queries: 90, Limit: 100, Shapes: ClientShapes, RecordAnswers: true})
	for i, r := range seg {
		if r.shape != recs[i].shape || string(appendFilters(r.req())) != string(appendFilters(recs[i].req())) {
			t.Fatalf("recording answers: %s sends %s, not %s", r.shape, appendFilters(r.req()), appendFilters(recs[i].req()))
		}
		r.ended = "eose"
	}
	for i, a := range recordAnswers(seg) {
		got := append([]byte(nil), a.Filter...)
		for _, m := range a.More {
			got = append(append(got, ','), m...)
		}
		if string(got) != string(appendFilters(seg[i].req())) {
			t.Fatalf("answer %d records %s, not %s", i, got, appendFilters(seg[i].req()))
		}
	}
}

// appendFilters is fs as a REQ carries them, comma-separated.
func appendFilters(fs []nostr.Filter) []byte {
	var b []byte
	for i := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = fs[i].AppendJSON(b)
	}
	return b
}

// The clients mix against an honest relay passes with its multi-filter
// REQs; against one that sends an event matching two filters of a REQ once
// per filter (UnionDuplicates), verification fails with duplicated events,
// in the home shape (whose filters overlap), and only there: nothing is
// missing or extra.
func TestClientMixUnionOnce(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{})
	_, q := publishAndQuery(t, r.URL(), ModePipeline, QueryOptions{Queries: 45, Shapes: ClientShapes, Name: "clients"})
	wantClientPhase(t, q, 45)

	r = testrelay.Start(t, testrelay.Config{UnionDuplicates: true})
	_, q = publishAndQuery(t, r.URL(), ModePipeline, QueryOptions{Queries: 45, Shapes: ClientShapes, Name: "clients"})
	v := q.Verification
	if v.Passed || v.Duplicated == 0 || v.Missing != 0 || v.Extra != 0 || v.NotMatching != 0 {
		t.Fatalf("duplicates across filters not detected: %+v", v)
	}
	for _, g := range q.Groups {
		if dup := g.Verification.Duplicated > 0; dup != (g.Name == "home") || g.Verification.Passed == dup {
			t.Errorf("shape %s: %+v", g.Name, g.Verification)
		}
	}
}

// A connection reuses a shape's subscription id, as clients do, only when
// its previous REQ was another shape's and ended with EOSE or CLOSED: then
// whatever the relay sent under the closed id came first.
func TestSubIDsReusedWhenSettled(t *testing.T) {
	s := subIDs{prefix: "q0-"}
	var got []string
	for _, step := range []struct {
		shape string
		how   wire.QueryEnd
	}{
		{"home", wire.EndEOSE}, {"thread", wire.EndEOSE}, {"home", wire.EndClosed}, {"thread", wire.EndEOSE},
		{"thread", wire.EndTimeout}, {"home", wire.EndEOSE}, {"home", wire.EndEOSE}, {"thread", wire.EndEOSE}, {"home", wire.EndEOSE},
	} {
		got = append(got, s.next(step.shape))
		s.ended(step.shape, step.how)
	}
	want := "q0-home q0-thread q0-home q0-thread q0-thread-2 q0-home-2 q0-home-3 q0-thread-3 q0-home-3"
	if strings.Join(got, " ") != want {
		t.Fatalf("ids %s\nwant %s", strings.Join(got, " "), want)
	}
}

// Against a relay that sends an event under each id just closed, the
// clients mix reusing ids keeps those strays out of every answer, even
// with one shape whose REQs follow each other.
func TestClientMixReusedIDsKeepStraysOut(t *testing.T) {
	for _, shapes := range [][]string{ClientShapes, {"home"}} {
		r := testrelay.Start(t, testrelay.Config{UnsolicitedEvents: true})
		_, q := publishAndQuery(t, r.URL(), ModePipeline, QueryOptions{Queries: 27, Shapes: shapes, Name: "clients"})
		if v := q.Verification; v == nil || !v.Passed || v.Checked != 27 {
			t.Fatalf("%v: verification %+v", shapes, v)
		}
		if q.Counts["events_after_close"] == 0 {
			t.Fatalf("%v: counts %v", shapes, q.Counts)
		}
	}
}

// The clients mix keeps a view open as clients do: every other REQ of a
// client shape is sent under the id of the subscription its connection
// left open, replacing it (no CLOSE before it; closed once answered), and
// its answer is judged against its own filters: an honest relay passes.
// (37 queries: the last is kept open, so the relay has read the CLOSE of
// each replacing REQ before it answered the next REQ.) A relay that then
// sends, under that id, a stored event matching only the replaced REQ's
// filters (ReplacedLiveEvent: no live delivery, since the relay held it
// before either REQ) fails with it not matching.
func TestClientMixReplacesOpenSubscriptions(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{})
	_, q := publishAndQuery(t, r.URL(), ModePipeline, QueryOptions{Queries: 37, Shapes: ClientShapes, Name: "clients"})
	wantClientPhase(t, q, 37)
	if st := r.Stats(); st.REQs != 37 || st.Closes != 18 {
		t.Fatalf("relay saw %d REQs and %d CLOSEs, want 37 and 18 (18 replaced an open subscription)", st.REQs, st.Closes)
	}
	if !containsPrefix(q.Verification.Notes, "18 of 37 answers verified were to a REQ sent under the id of a subscription still open") {
		t.Fatalf("notes %q", q.Verification.Notes)
	}

	r = testrelay.Start(t, testrelay.Config{ReplacedLiveEvent: true})
	_, q = publishAndQuery(t, r.URL(), ModePipeline, QueryOptions{Queries: 36, Shapes: ClientShapes, Name: "clients"})
	v, sent := q.Verification, r.Stats().ReplacedLiveEvents
	if sent == 0 || v.Passed || v.NotMatching != int64(sent) || v.Missing != 0 || v.Extra != 0 || v.Duplicated != 0 {
		t.Fatalf("%d old events sent after a replacing REQ; verification %+v", sent, v)
	}
}

// setAside takes out of an answer to a REQ that replaced an open
// subscription what the old one may have sent live: an event matching only
// the old filters, and the second copy of one matching both; never an
// event the model held before the phase (no live delivery: the verifier
// judges it), nor the third copy of one (a duplicate).
func TestSetAsideReplaced(t *testing.T) {
	ev := func(n int, tags ...string) *nostr.Event {
		e := &nostr.Event{ID: fmt.Sprintf("%064x", n), PubKey: fmt.Sprintf("%064x", 1000), CreatedAt: int64(1000 + n), Kind: 1, Sig: strings.Repeat("0", 128)}
		for _, v := range tags {
			e.Tags = append(e.Tags, nostr.Tag{"t", v})
		}
		return e
	}
	oldOnly, both, heldOld, newOnly, heldBoth := ev(1, "a"), ev(2, "a", "b"), ev(3, "a"), ev(4, "b"), ev(5, "a", "b")
	answer := []*nostr.Event{oldOnly, both, heldOld, newOnly, both, heldBoth, newOnly, both, heldBoth}
	for _, c := range []struct {
		model *verify.Model
		aside int64
		kept  string
	}{
		{verify.NewModel([]*nostr.Event{heldOld, newOnly, heldBoth}), 2, "2 3 4 5 4 2 5"},
		{nil, 4, "2 4 5 4 2"},
	} {
		r := &queryRecord{filter: nostr.Filter{Tags: map[string][]string{"t": {"b"}}}, replaced: []nostr.Filter{{Tags: map[string][]string{"t": {"a"}}}}}
		qr := wire.QueryResult{Ended: wire.EndEOSE}
		for _, e := range answer {
			qr.Events = append(qr.Events, e.AppendJSON(nil))
		}
		r.setAside(&qr, c.model)
		var kept []string
		for _, raw := range qr.Events {
			e, err := nostr.ParseEvent(raw)
			if err != nil {
				t.Fatal(err)
			}
			kept = append(kept, strings.TrimLeft(e.ID, "0"))
		}
		if r.aside != c.aside || strings.Join(kept, " ") != c.kept {
			t.Errorf("model %v: aside %d, kept %v; want %d, %s", c.model != nil, r.aside, kept, c.aside, c.kept)
		}
	}
}
