package workload

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/negentropy"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

// publishForSync publishes the small corpus to url and returns what the
// relay holds and its NIP-11 document.
func publishForSync(t *testing.T, url string) ([]*nostr.Event, *nip11.Info) {
	t.Helper()
	c := smallCorpus(t)
	pr, err := Publish(testCtx(t), url, c, all(c), PublishOptions{Base: Base{Timeout: 5 * time.Second}, Connections: 4, Mode: ModeWait})
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	info, _, err := nip11.Fetch(testCtx(t), url)
	if err != nil {
		t.Fatal(err)
	}
	return storedModel(c, pr).Live, info
}

// checkNegPhases checks what every negentropy run must satisfy: three
// phases, balanced accounts, no wrong answer, figures for what converged,
// and the steady state in one round trip.
func checkNegPhases(t *testing.T, phases []results.Phase, rounds int) {
	t.Helper()
	if len(phases) != 3 {
		t.Fatalf("%d phases, want 3", len(phases))
	}
	for i, want := range []string{"negentropy/initial", "negentropy/delta", "negentropy/steady"} {
		ph := phases[i]
		if ph.Name != want {
			t.Fatalf("phase %d is %s, want %s", i, ph.Name, want)
		}
		a := ph.Account(OpReconcile)
		if a == nil || a.Requested != int64(rounds) || !a.Balanced() {
			t.Fatalf("%s: account %+v", ph.Name, a)
		}
		for _, acc := range ph.Accounts {
			if !acc.Balanced() {
				t.Errorf("%s: unbalanced %s", ph.Name, outcome.Split(acc))
			}
		}
		if ph.Verification == nil || !ph.Verification.Passed {
			t.Errorf("%s: verification %+v, errors %v", ph.Name, ph.Verification, ph.Errors)
		}
		if a.Accepted > 0 {
			if ph.Latency["sync"] == nil || ph.Latency["sync"].Count != a.Accepted || ph.Counts["bytes_up"] <= 0 || ph.Counts["bytes_down"] <= 0 {
				t.Errorf("%s: figures missing: latency %v counts %v", ph.Name, ph.Latency, ph.Counts)
			}
		}
	}
	steady := phases[2]
	if a := steady.Account(OpReconcile); a.Accepted != int64(rounds) {
		t.Errorf("steady: %s", outcome.Split(*a))
	}
	if steady.Counts["round_trips_max"] != 1 || steady.Counts["need_ids"] != 0 || steady.Counts["have_ids"] != 0 {
		t.Errorf("steady state: %v", steady.Counts)
	}
}

// TestNegentropyEmbeddedRelay runs the three scenarios against the embedded
// relay (khatru v0.19.1, native store). khatru stores a session only after
// it has sent its first answer, so a client that answers at once may find
// no session: the relay then sends NEG-ERROR "CLOSED". Such a
// reconciliation is refused (never a wrong answer); every one that
// converges must be exact. The steady state takes one round trip, so it
// never meets that race.
func TestNegentropyEmbeddedRelay(t *testing.T) {
	url := embeddedURL(t, "native")
	live, info := publishForSync(t, url)
	if !info.SupportsNIP(77) {
		t.Fatalf("the embedded relay does not announce NIP-77: %v", info.SupportedNIPs)
	}
	phases, err := Negentropy(testCtx(t), url, smallCorpus(t), live, info, NegentropyOptions{Base: Base{Seed: 5, Timeout: 10 * time.Second}, Rounds: 3, Delta: 20})
	if err != nil {
		t.Fatal(err)
	}
	checkNegPhases(t, phases, 3)
	for _, ph := range phases[:2] {
		a := ph.Account(OpReconcile)
		if a.Accepted+a.Refused != a.Requested {
			t.Errorf("%s: %s", ph.Name, outcome.Split(*a))
		}
		if a.Refused > 0 && !strings.Contains(strings.Join(ph.Errors, "|"), "CLOSED (sent as NEG-ERROR") {
			t.Errorf("%s: refused for another reason: %v", ph.Name, ph.Errors)
		}
		if a.Accepted > 0 {
			want := map[string]int64{"negentropy/initial": int64(len(live)) - int64(len(live))*8/10, "negentropy/delta": 20}[ph.Name]
			if got := ph.Counts["need_ids"] / a.Accepted; got < want-1 || got > want+1 {
				t.Errorf("%s: %d needed ids per sync, want %d", ph.Name, got, want)
			}
		}
	}
	delta := phases[1]
	if delta.Counts["delta_accepted"] != 20 {
		t.Errorf("delta events: %v", delta.Counts)
	}
	if a := delta.Account(OpReconcile); a.Accepted > 0 && delta.Counts["read_back_events"] != 20 {
		t.Errorf("read-back: %v", delta.Counts)
	}
}

// TestNegentropySkipsWithoutNIP77: a relay that does not announce NIP-77
// (or serves no NIP-11 document) skips the workload with one note and no
// operations.
func TestNegentropySkipsWithoutNIP77(t *testing.T) {
	tr := testrelay.Start(t, testrelay.Config{})
	info, _, err := nip11.Fetch(testCtx(t), tr.URL())
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []*nip11.Info{info, nil} {
		phases, err := Negentropy(testCtx(t), tr.URL(), smallCorpus(t), smallCorpus(t).Events, in, NegentropyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(phases) != 1 || len(phases[0].Notes) != 1 || !strings.HasPrefix(phases[0].Notes[0], "skipped: ") ||
			len(phases[0].Accounts) != 0 || phases[0].Duration != 0 || !strings.Contains(phases[0].Skipped, "NIP-77") {
			t.Fatalf("got %+v", phases)
		}
		if !strings.Contains(phases[0].Notes[0], "NIP-77") {
			t.Errorf("note %q does not name NIP-77", phases[0].Notes[0])
		}
	}
	if tr.Stats().Connections != 0 {
		t.Errorf("the skipped workload connected %d times", tr.Stats().Connections)
	}
}

// TestNegentropyWithoutPublishedSet: nothing published, nothing to verify
// against: every reconciliation is not run, with why.
func TestNegentropyWithoutPublishedSet(t *testing.T) {
	url := embeddedURL(t, "native")
	info, _, err := nip11.Fetch(testCtx(t), url)
	if err != nil {
		t.Fatal(err)
	}
	phases, err := Negentropy(testCtx(t), url, smallCorpus(t), nil, info, NegentropyOptions{Rounds: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(phases) != 3 {
		t.Fatalf("%d phases", len(phases))
	}
	for _, ph := range phases {
		a := ph.Account(OpReconcile)
		if a == nil || a.NotRun != 2 || !a.Balanced() {
			t.Errorf("%s: %+v", ph.Name, a)
		}
	}
}

// TestNegCheck: a converged reconciliation is verified id by id: a missing,
// an extra and a repeated id each fail it.
func TestNegCheck(t *testing.T) {
	need := map[string]bool{"a": true, "b": true}
	have := map[string]bool{"c": true}
	for _, tc := range []struct {
		name       string
		need, have []string
		ok         bool
		missing    int64
		extra, dup int64
	}{
		{"exact", []string{"b", "a"}, []string{"c"}, true, 0, 0, 0},
		{"missing", []string{"a"}, []string{"c"}, false, 1, 0, 0},
		{"extra", []string{"a", "b", "x"}, []string{"c"}, false, 0, 1, 0},
		{"have swapped for need", []string{"a", "b", "c"}, nil, false, 1, 1, 0},
		{"repeated", []string{"a", "b", "a"}, []string{"c"}, false, 0, 0, 1},
	} {
		var v results.Verification
		v.Verified = true
		ok := negCheck(&v, negentropy.Result{Need: tc.need, Have: tc.have}, need, have, nil)
		verify.Finish(&v)
		if ok != tc.ok || v.Passed != tc.ok || v.Missing != tc.missing || v.Extra != tc.extra || v.Duplicated != tc.dup || v.Expected != 3 {
			t.Errorf("%s: ok %v, %+v", tc.name, ok, v)
		}
	}
}

// frameProxy is a WebSocket proxy in front of a relay that loses messages
// of chosen events: for an event id, act says what becomes of it.
type frameProxy struct {
	up    string
	act   func(id string, fresh int) proxyAct // fresh: ordinal of the event among those not in known
	known map[string]bool
	mu    sync.Mutex
	fresh int
	acts  map[string]proxyAct
	base  context.Context
}

type proxyAct int

const (
	forward  proxyAct = iota
	loseOK            // the relay gets the EVENT, its OK never reaches the client
	loseBoth          // the relay never gets the EVENT, no OK comes
	fakeOK            // the relay never gets the EVENT, the client gets OK true
)

// newFrameProxy starts a proxy to upstream (a ws URL) and returns its URL.
func newFrameProxy(t *testing.T, upstream string, known map[string]bool, act func(id string, fresh int) proxyAct) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &frameProxy{up: upstream, act: act, known: known, acts: map[string]proxyAct{}, base: ctx}
	srv := httptest.NewServer(p)
	t.Cleanup(func() { cancel(); srv.Close() })
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// of is what becomes of the event id (decided once, when first sent).
func (p *frameProxy) of(id string) proxyAct {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a, ok := p.acts[id]; ok {
		return a
	}
	n := -1
	if !p.known[id] {
		n = p.fresh
		p.fresh++
	}
	a := p.act(id, n)
	p.acts[id] = a
	return a
}

func (p *frameProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cc, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	defer cc.CloseNow()
	ctx, cancel := context.WithCancel(p.base)
	defer cancel()
	uc, _, err := websocket.Dial(ctx, p.up, nil)
	if err != nil {
		return
	}
	defer uc.CloseNow()
	cc.SetReadLimit(-1)
	uc.SetReadLimit(-1)
	var wmu sync.Mutex // the client connection is written from both pumps
	toClient := func(typ websocket.MessageType, b []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		return cc.Write(ctx, typ, b)
	}
	go func() {
		defer cancel()
		for { // client → relay
			typ, b, err := cc.Read(ctx)
			if err != nil {
				return
			}
			if id := frameEventID(b, "EVENT"); id != "" {
				switch p.of(id) {
				case loseBoth:
					continue
				case fakeOK:
					if toClient(websocket.MessageText, []byte(`["OK","`+id+`",true,""]`)) != nil {
						return
					}
					continue
				}
			}
			if uc.Write(ctx, typ, b) != nil {
				return
			}
		}
	}()
	for { // relay → client
		typ, b, err := uc.Read(ctx)
		if err != nil {
			return
		}
		if id := frameEventID(b, "OK"); id != "" && p.of(id) == loseOK {
			continue
		}
		if toClient(typ, b) != nil {
			return
		}
	}
}

// frameEventID is the event id of an EVENT (client) or OK (relay) frame.
func frameEventID(b []byte, label string) string {
	if !bytes.HasPrefix(b, []byte(`["`+label+`"`)) {
		return ""
	}
	var msg []json.RawMessage
	if json.Unmarshal(b, &msg) != nil || len(msg) < 2 {
		return ""
	}
	if label == "OK" {
		var id string
		_ = json.Unmarshal(msg[1], &id)
		return id
	}
	return string(EventIDOf(msg[1]))
}

// replaceableSplit picks from the corpus, by the model of all its events,
// the newest versions of up to n replaceable or addressable keys that have
// an older version too, a regular event and a replaceable event whose key
// has one version only (neither superseded nor superseding).
func replaceableSplit(t *testing.T, evs []*nostr.Event, n int) (newest []*nostr.Event, regular, single *nostr.Event) {
	t.Helper()
	versions := map[string]int{}
	for _, e := range evs {
		if k, ok := verify.ReplaceKey(e); ok {
			versions[k]++
		}
	}
	for _, e := range verify.NewModel(evs).Live {
		k, ok := verify.ReplaceKey(e)
		switch {
		case !ok && regular == nil:
			regular = e
		case ok && versions[k] == 1 && single == nil:
			single = e
		case ok && versions[k] > 1 && len(newest) < n:
			newest = append(newest, e)
		}
	}
	if len(newest) == 0 || regular == nil || single == nil {
		t.Fatalf("the corpus lacks the events this test needs: %d newest versions, regular %v, single %v", len(newest), regular != nil, single != nil)
	}
	return newest, regular, single
}

// The newer version of a replaceable or addressable event, published after
// an accepted older one, whose OK never came: the relay may hold it and
// have dropped the older version, or not. Neither the unknown event nor the
// accepted version it would supersede is owed or wrong in any scenario;
// nor are delta events whose OK never came. Before this was handled, a
// relay that stored the newer version failed (the older one missing or
// extra). The control: a relay that OKs events and drops them (a regular
// one and a replaceable one nothing supersedes) still fails, by exactly
// those ids.
func TestNegentropyUnknownNewerVersion(t *testing.T) {
	t.Parallel() // its cases wait out lost OKs, each on its own relay
	c := smallCorpus(t)
	newest, regular, single := replaceableSplit(t, c.Events, 3)
	isNewest := map[string]bool{}
	for _, e := range newest {
		isNewest[e.ID] = true
	}
	known := map[string]bool{}
	for _, e := range c.Events {
		known[e.ID] = true
	}
	const rounds, delta = 3, 10
	for _, tc := range []struct {
		name      string
		newer     proxyAct // what becomes of the newest versions
		lostDelta bool     // the OKs of delta events 0 and 2 are lost
		control   bool     // the regular and the single event are OKed and dropped
	}{
		{"stored, OK lost", loseOK, true, false},
		{"never stored", loseBoth, false, false},
		{"stored, OK lost; accepted events dropped", loseOK, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each waits out its lost OKs, on its own relay
			relayURL := embeddedURL(t, "native")
			info, _, err := nip11.Fetch(testCtx(t), relayURL)
			if err != nil {
				t.Fatal(err)
			}
			url := newFrameProxy(t, relayURL, known, func(id string, fresh int) proxyAct {
				switch {
				case isNewest[id]:
					return tc.newer
				case tc.control && (id == regular.ID || id == single.ID):
					return fakeOK
				case tc.lostDelta && (fresh == 0 || fresh == 2):
					return loseOK
				}
				return forward
			})
			// Lost OKs time out: a short wait, which only ever makes more
			// events unknown, never a right answer wrong.
			pr, err := Publish(testCtx(t), url, c, all(c), PublishOptions{Base: Base{Timeout: 2 * time.Second}, Connections: 4, Mode: ModeWait})
			if err != nil {
				t.Fatal(err)
			}
			m, _ := outcomeModel(c, pr)
			for _, e := range newest {
				if !m.IsUnknown(e.ID) {
					t.Fatalf("the newest version %s is not unknown", e.ID)
				}
			}
			if len(m.Uncertain()) <= len(m.Unknown) {
				t.Fatalf("no accepted event is threatened by an unknown newer version: %d uncertain, %d unknown", len(m.Uncertain()), len(m.Unknown))
			}
			phases, err := Negentropy(testCtx(t), url, c, m.Live, info, NegentropyOptions{Base: Base{Seed: 5, Timeout: 3 * time.Second}, Rounds: rounds, Delta: delta, Unknown: m.Unknown})
			if err != nil {
				t.Fatal(err)
			}
			if len(phases) != 3 {
				t.Fatalf("%d phases", len(phases))
			}
			for _, ph := range phases {
				for _, a := range ph.Accounts {
					if !a.Balanced() {
						t.Errorf("%s: unbalanced %s", ph.Name, outcome.Split(a))
					}
				}
				if v := ph.Verification; !tc.control && v.Status() == results.VerificationFailed {
					t.Errorf("%s: %s (missing %d, extra %d), errors %v", ph.Name, v.Status(), v.Missing, v.Extra, ph.Errors)
				}
			}
			if tc.lostDelta {
				if a := phases[1].Account(results.OpEvent); a == nil || a.TimedOut < 2 || phases[1].Counts["delta_accepted"] > delta-2 {
					t.Errorf("delta events: %v, account %+v", phases[1].Counts, a)
				}
			}
			// The steady state takes one round trip: khatru's session race
			// never refuses it, every round is judged.
			steady := phases[2]
			a := steady.Account(OpReconcile)
			v := steady.Verification
			if a.Accepted == 0 {
				t.Fatalf("steady: no reconciliation converged: %s, errors %v", outcome.Split(*a), steady.Errors)
			}
			switch {
			case tc.control:
				if v.Status() != results.VerificationFailed || v.Extra != 2*a.Accepted || v.Missing != 0 {
					t.Errorf("steady, two accepted events dropped: %s, missing %d, extra %d in %d reconciliations", v.Status(), v.Missing, v.Extra, a.Accepted)
				}
			case tc.newer == loseOK:
				// The relay reports the newest versions it stored within
				// the filter {until: newest accepted created_at}.
				want, until := int64(0), int64(0)
				for _, e := range m.Live {
					until = max(until, e.CreatedAt)
				}
				for _, e := range newest {
					if e.CreatedAt <= until {
						want++
					}
				}
				if tc.lostDelta {
					want += 2
				}
				if v.StoredUnknown < want {
					t.Errorf("steady: stored_unknown %d, want at least %d (notes %q)", v.StoredUnknown, want, v.Notes)
				}
			}
		})
	}
}

// TestNegCheckUncertain: an uncertain id (the relay may hold it or not) is
// neither missing nor extra, on either side, expected or not; the certain
// ids are still judged, and a repeated uncertain id is still a duplicate.
func TestNegCheckUncertain(t *testing.T) {
	need := map[string]bool{"a": true, "t": true} // t: accepted, an unknown event would supersede it
	have := map[string]bool{"c": true}
	uncertain := map[string]bool{"t": true, "u": true} // u: unknown
	for _, tc := range []struct {
		name           string
		need, have     []string
		ok             bool
		missing, extra int64
		dup            int64
	}{
		{"relay holds both", []string{"a", "t", "u"}, []string{"c"}, true, 0, 0, 0},
		{"relay holds neither", []string{"a"}, []string{"c"}, true, 0, 0, 0},
		{"threat in have", []string{"a"}, []string{"c", "t"}, true, 0, 0, 0},
		{"certain id missing", []string{"t", "u"}, []string{"c"}, false, 1, 0, 0},
		{"certain id extra", []string{"a", "x"}, []string{"c"}, false, 0, 1, 0},
		{"uncertain id repeated", []string{"a", "u", "u"}, []string{"c"}, false, 0, 0, 1},
	} {
		v := results.Verification{Verified: true}
		ok := negCheck(&v, negentropy.Result{Need: tc.need, Have: tc.have}, need, have, uncertain)
		verify.Finish(&v)
		if ok != tc.ok || v.Passed != tc.ok || v.Missing != tc.missing || v.Extra != tc.extra || v.Duplicated != tc.dup || v.Expected != 2 {
			t.Errorf("%s: ok %v, %+v", tc.name, ok, v)
		}
	}
}

// Interrupted, the scenarios that never started are booked cancelled, not
// dropped: every scenario's rounds are accounted for.
func TestNegentropyInterruptedBooksEveryScenario(t *testing.T) {
	url := embeddedURL(t, "native")
	live, info := publishForSync(t, url)
	ctx, cancel := context.WithCancel(testCtx(t))
	cancel()
	phases, _ := Negentropy(ctx, url, smallCorpus(t), live, info, NegentropyOptions{Base: Base{Seed: 5, Timeout: 10 * time.Second}, Rounds: 3, Delta: 20})
	if len(phases) != 3 {
		t.Fatalf("%d phases, want the three scenarios", len(phases))
	}
	for _, ph := range phases {
		a := ph.Account(OpReconcile)
		if a == nil || !a.Balanced() || a.Requested != 3 || a.Cancelled != 3 {
			t.Errorf("%s: account %+v, want 3 rounds cancelled", ph.Name, a)
		}
	}
}

// TestNegentropyPrior: the probe asked before publishing finds nothing on an
// empty relay, and on one holding events names how many (the embedded
// relay announces NIP-45) in one sentence with one parenthetical, its COUNT answer (not what it accepted: this run
// accepted nothing yet); on a relay without NIP-77 it says nothing (the
// workload skips itself there).
func TestNegentropyPrior(t *testing.T) {
	url := embeddedURL(t, "native")
	if why := NegentropyPrior(testCtx(t), url, 10*time.Second); why != "" {
		t.Fatalf("empty relay: %q", why)
	}
	live, _ := publishForSync(t, url)
	why := NegentropyPrior(testCtx(t), url, 10*time.Second)
	if want := "already holds " + numfmt.Count(len(live), "event"); !strings.Contains(why, want) || !strings.Contains(why, "needs an empty relay") ||
		!strings.Contains(why, " dated up to now (by its COUNT answer) before this run") || strings.Contains(why, "accepted") || strings.Count(why, "(") != 1 {
		t.Errorf("relay holding %d events: %q, want %q", len(live), why, want)
	}
	tr := testrelay.Start(t, testrelay.Config{})
	if why := NegentropyPrior(testCtx(t), tr.URL(), 10*time.Second); why != "" {
		t.Errorf("relay without NIP-77: %q", why)
	}
}

// TestNegentropyWrongSetsKeepCPU: reconciliations that end on sets the
// verification rejects (here the relay holds events the run's set lacks)
// still spent the protocol's client CPU: the note gives it, never "n/a".
func TestNegentropyWrongSetsKeepCPU(t *testing.T) {
	url := embeddedURL(t, "native")
	live, info := publishForSync(t, url)
	phases, err := Negentropy(testCtx(t), url, smallCorpus(t), live[:len(live)/2], info,
		NegentropyOptions{Base: Base{Seed: 5, Timeout: 10 * time.Second}, Rounds: 2, Delta: 5})
	if err != nil {
		t.Fatal(err)
	}
	steady := phases[len(phases)-1]
	if v := steady.Verification; v == nil || v.Passed || v.Extra == 0 {
		t.Fatalf("steady: verification %+v, want failed with extra ids", v)
	}
	note := strings.Join(steady.Notes, "\n")
	if _, ok := steady.Counts["client_cpu_us_p50"]; !ok || strings.Contains(note, "n/a") || !strings.Contains(note, "p50 ") {
		t.Errorf("steady: no client CPU for reconciliations that ended: counts %v, notes %q", steady.Counts, note)
	}
}
