package workload

import (
	"strings"
	"testing"
	"time"

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
	pr, err := Publish(ctxT(t), url, c, all(c), PublishOptions{Connections: 4, Mode: ModeWait, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	var acc []*nostr.Event
	for _, i := range pr.StoredIndexes() {
		acc = append(acc, c.Events[i])
	}
	info, _, err := nip11.Fetch(ctxT(t), url)
	if err != nil {
		t.Fatal(err)
	}
	return verify.NewModel(acc).Live, info
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
	phases, err := Negentropy(ctxT(t), url, smallCorpus(t), live, info, NegentropyOptions{Rounds: 3, Delta: 20, Seed: 5, Timeout: 10 * time.Second})
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
	tr := testrelay.New(testrelay.Config{})
	t.Cleanup(tr.Close)
	info, _, err := nip11.Fetch(ctxT(t), tr.URL())
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []*nip11.Info{info, nil} {
		phases, err := Negentropy(ctxT(t), tr.URL(), smallCorpus(t), smallCorpus(t).Events, in, NegentropyOptions{})
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
	info, _, err := nip11.Fetch(ctxT(t), url)
	if err != nil {
		t.Fatal(err)
	}
	phases, err := Negentropy(ctxT(t), url, smallCorpus(t), nil, info, NegentropyOptions{Rounds: 2})
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
		ok := negCheck(&v, negentropy.Result{Need: tc.need, Have: tc.have}, need, have)
		verify.Finish(&v)
		if ok != tc.ok || v.Passed != tc.ok || v.Missing != tc.missing || v.Extra != tc.extra || v.Duplicated != tc.dup || v.Expected != 3 {
			t.Errorf("%s: ok %v, %+v", tc.name, ok, v)
		}
	}
}
