package relaymetrics

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/internal/testkit"
	"github.com/relaybench/relaybench/results"
)

// startShared starts the catalog relay name from testkit.SharedBinDir
// (the test skipped in one line without its binary), stopped at the test's
// end, and returns it with its metrics URL (the catalog's metrics_path).
func startShared(t *testing.T, ctx context.Context, name string) (*harness.Instance, string) {
	t.Helper()
	dir := testkit.SharedBinDir()
	bin := filepath.Join(dir, name)
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no %s binary in %s", name, dir)
	}
	tmp := t.TempDir()
	inst, err := harness.Start(ctx, name, harness.StartOptions{BinDir: dir, Bins: map[string]string{name: bin},
		BaseDir: filepath.Join(tmp, "run"), DataRoot: filepath.Join(tmp, "data")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		inst.Stop(ctx)
	})
	u, err := Resolve(inst.Spec.MetricsPath, inst.URL)
	if err != nil || inst.Spec.MetricsPath == "" {
		t.Fatalf("%s: metrics_path %q: %v", name, inst.Spec.MetricsPath, err)
	}
	return inst, u
}

// sendAndWait sends each message to the relay on one connection and
// waits for the answer that ends it (OK for EVENT and AUTH, EOSE or
// CLOSED for REQ), in any order; it returns the OKs' accepted flags by id.
func sendAndWait(t *testing.T, ctx context.Context, url string, msgs [][]byte, ends []string) map[string]bool {
	t.Helper()
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 20)
	for _, m := range msgs {
		if err := ws.Write(ctx, websocket.MessageText, m); err != nil {
			t.Fatal(err)
		}
	}
	waiting := map[string]bool{}
	for _, e := range ends {
		waiting[e] = true
	}
	oks := map[string]bool{}
	testkit.Frames(ctx, ws, nil, func(f testkit.Frame) bool {
		var key string
		json.Unmarshal(f.Msg[1], &key)
		if f.Label == "OK" && len(f.Msg) >= 3 {
			var ok bool
			json.Unmarshal(f.Msg[2], &ok)
			oks[key] = ok
		}
		if f.Label == "OK" || f.Label == "EOSE" || f.Label == "CLOSED" {
			delete(waiting, key)
		}
		return len(waiting) > 0
	})
	if len(waiting) > 0 {
		t.Fatalf("no answer to %v within the hang guard", waiting)
	}
	return oks
}

// countingMessages are 3 new events, the first again (a duplicate), a
// fourth with a broken signature, an AUTH (for relays that take it) and a
// REQ: what each relay's own metrics are checked against. They return the
// messages and the ids or subscription that end each.
func countingMessages(t *testing.T, auth bool) ([][]byte, []string) {
	t.Helper()
	c, err := corpus.Generate(context.Background(), corpus.Params{Seed: 11, Events: 5, Authors: 2, AvgSize: 64}.WithDefaults(), corpus.Options{CacheDir: "off"})
	if err != nil {
		t.Fatal(err)
	}
	event := func(i int) []byte { return []byte(`["EVENT",` + string(c.Raw[i]) + `]`) }
	badSig := []byte(strings.Replace(string(event(3)), `"sig":"`+c.Events[3].Sig[:1], `"sig":"`+flipHex(c.Events[3].Sig[:1]), 1))
	msgs := [][]byte{event(0), event(1), event(2), event(0), badSig}
	ends := []string{c.Events[0].ID, c.Events[1].ID, c.Events[2].ID, c.Events[3].ID}
	if auth {
		msgs = append(msgs, []byte(`["AUTH",`+string(c.Raw[4])+`]`))
		ends = append(ends, c.Events[4].ID)
	}
	msgs = append(msgs, []byte(`["REQ","count",{"ids":["`+c.Events[0].ID+`"]}]`))
	return msgs, append(ends, "count")
}

func flipHex(s string) string {
	if s == "0" {
		return "1"
	}
	return "0"
}

// readDelta reads the relay's metrics before and after do: what they
// counted of it.
func readDelta(t *testing.T, url string, do func()) map[string]float64 {
	t.Helper()
	r := &Recorder{url: url, client: &http.Client{Timeout: 30 * time.Second}} // hang guard
	before, err := r.read()
	if err != nil {
		t.Fatal(err)
	}
	do()
	after, err := r.read()
	if err != nil {
		t.Fatal(err)
	}
	d, resets := deltas(before, after)
	if len(resets) > 0 {
		t.Fatalf("counters went down: %v", resets)
	}
	return d
}

// annotated is a phase that published 5 EVENTs (4 accepted: 3 new, 1
// duplicate; 1 refused) and sent 1 REQ, with the relay's counts of it.
func annotated(d map[string]float64) results.Phase {
	ph := results.NewPhase("p", "p")
	ph.Accounts = []results.Account{{Op: results.OpEvent, Requested: 5, Accepted: 4, Refused: 1},
		{Op: results.OpQuery, Requested: 1, Accepted: 1}}
	ph.RelayMetrics = d
	ph.RelayChecks = Checks(&ph)
	ph.Notes = notes(&ph)
	return ph
}

// TestNostrRsRelayCountsEveryEVENTTwice pins the finding behind the
// "relay metrics disagree" note against nostr-rs-relay 0.8.12: for 5 EVENT
// messages (3 new, a duplicate, a broken signature) and an AUTH, its
// nostr_cmd_event_total rises by 11 (2 per EVENT, src/server.rs:1266 and
// :1269 or :1330; 1 for the AUTH, :1266), while its events written (4: a
// duplicate is written again) and REQs (1) are as sent. relaybench's note
// names the double count as the relay's.
func TestNostrRsRelayCountsEveryEVENTTwice(t *testing.T) {
	d := countedBy(t, "nostr-rs-relay-sqlite", true)
	want := map[string]float64{"nostr_cmd_event_total": 11, "nostr_cmd_auth_total": 1, "nostr_events_write_seconds_count": 4, "nostr_cmd_req_total": 1}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("%s rose by %v, want %v (all: %v)", k, d[k], v, d)
		}
	}
	ph := annotated(d)
	note := strings.Join(ph.Notes, "\n")
	if !strings.Contains(note, "the relay counted 11 EVENT messages received (nostr_cmd_event_total), 2 times relaybench's 4 … 5 (accepted (OK true) … sent) plus the relay's 1 (nostr_cmd_auth_total); a relay finding") ||
		!strings.Contains(note, "relay metrics: 4 events written (nostr_events_write_seconds_count), within relaybench's 4 … 5") {
		t.Errorf("notes:\n%s", note)
	}
}

// TestWispCountsAsSent: Wisp 0.6's wisp_events_stored_total counts each
// event it stored once (not the duplicate, not the broken one) and
// wisp_req_total each REQ: within relaybench's bounds, no finding.
func TestWispCountsAsSent(t *testing.T) {
	d := countedBy(t, "wisp", false)
	if d["wisp_events_stored_total"] != 3 || d["wisp_req_total"] != 1 {
		t.Errorf("stored rose by %v, REQs by %v; want 3 and 1 (all: %v)", d["wisp_events_stored_total"], d["wisp_req_total"], d)
	}
	ph := annotated(d)
	for _, c := range ph.RelayChecks {
		if c.Disagree {
			t.Errorf("check %+v disagrees: %q", c, ph.Notes)
		}
	}
	if len(ph.RelayChecks) != 2 {
		t.Errorf("checks %+v", ph.RelayChecks)
	}
}

// countedBy starts the catalog relay name, sends it countingMessages (with
// the AUTH when auth), checks that it accepted the 3 new events, and
// returns what its metrics counted of it.
func countedBy(t *testing.T, name string, auth bool) map[string]float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // hang guard
	defer cancel()
	inst, url := startShared(t, ctx, name)
	msgs, ends := countingMessages(t, auth)
	var oks map[string]bool
	d := readDelta(t, url, func() { oks = sendAndWait(t, ctx, inst.URL, msgs, ends) })
	n := 0
	for _, ok := range oks {
		if ok {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("OK true for %d ids, want 3 (the duplicate's OK shares the first's id): %v", n, oks)
	}
	return d
}
