package conformance

import (
	"context"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testkit"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/results"
)

// testOpts: generous waits, hang guards only (a check that needs a wait to
// run out to decide, as ephemeral.ok or req.malformed-closed against a
// silent relay, waits this long once).
var testOpts = Options{Timeout: 10 * time.Second}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func runAll(t *testing.T, url string, info *nip11.Info, only ...string) map[string]results.Check {
	t.Helper()
	o := testOpts
	o.Only = only
	return runWith(t, url, info, o)
}

// runWith runs the checks of o against url and returns them by ID; a
// check that did not pass is logged.
func runWith(t *testing.T, url string, info *nip11.Info, o Options) map[string]results.Check {
	t.Helper()
	got, err := Run(testCtx(t), url, info, o)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]results.Check{}
	for _, c := range got {
		m[c.ID] = c
		if c.Status != results.CheckPass {
			t.Logf("%s: %s: %s", c.ID, c.Status, c.Detail)
		}
	}
	return m
}

// runEach runs every check at once, each on its own test relay with cfg
// (a check that waits out a Timeout waits beside the others, not after
// them), and returns them by ID.
func runEach(t *testing.T, cfg testrelay.Config, info *nip11.Info) map[string]results.Check {
	t.Helper()
	ctx := testCtx(t)
	got := make([][]results.Check, len(all))
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, c := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := testrelay.New(cfg)
			defer r.Close()
			o := testOpts
			o.Only = []string{c.ID}
			got[i], errs[i] = Run(ctx, r.URL(), info, o)
		}()
	}
	wg.Wait()
	m := map[string]results.Check{}
	for i := range all {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		for _, c := range got[i] {
			m[c.ID] = c
			if c.Status != results.CheckPass {
				t.Logf("%s: %s: %s", c.ID, c.Status, c.Detail)
			}
		}
	}
	return m
}

// describe is a check's outcome with its evidence, for failure messages.
func describe(c results.Check) string {
	return string(c.Status) + ": " + c.Detail + "\n  " + strings.Join(c.Evidence, "\n  ")
}

// The honest test relay passes every check of NIP-01 and NIP-11 (its
// document, CORS headers); the other NIPs are not announced by it.
func TestHonestTestRelayPasses(t *testing.T) {
	r := testrelay.New(testrelay.Config{Verify: true})
	defer r.Close()
	got := runAll(t, r.URL(), &nip11.Info{SupportedNIPs: []any{1.0, 11.0}})
	if len(got) != len(all) {
		t.Fatalf("%d checks ran, want %d", len(got), len(all))
	}
	for id, c := range got {
		want := results.CheckPass
		if c.NIP != 1 && c.NIP != 11 || id == "nip50.search-and-conditions" {
			want = results.CheckNotAnnounced
		}
		if c.Status != want {
			t.Errorf("%s: %s", id, describe(c))
		}
		if c.Level == "" || c.Sentence == "" || c.NIP == 0 {
			t.Errorf("%s: no level, sentence or NIP: %+v", id, c)
		}
	}
}

// Each knob breaks one rule: its check ends as want, every other check of
// the NIP-01 set passes.
func TestEachMisbehaviourCaught(t *testing.T) {
	t.Parallel() // its cases wait out a Timeout each, idle, beside TestSharedRelays
	type want = map[string]results.CheckStatus
	cases := []struct {
		name string
		cfg  testrelay.Config
		want want // these checks end so; no other check fails
	}{
		{"same id does not replace", testrelay.Config{SameIDNoReplace: true}, want{"req.same-id-replaces": results.CheckFail}},
		{"union duplicates", testrelay.Config{UnionDuplicates: true}, want{"req.multi-filter-once": results.CheckFail}},
		{"the first filter's limit for all", testrelay.Config{FirstFilterLimit: true}, want{"req.multi-filter-own-limit": results.CheckFail}},
		{"ids ignore other conditions", testrelay.Config{IgnoreIDsConditions: true}, want{"req.ids-and-conditions": results.CheckFail}},
		{"tag values as prefixes", testrelay.Config{TagPrefixMatch: true}, want{"req.tag-value-exact": results.CheckFail}},
		{"since and until exclusive", testrelay.Config{BoundsExclusive: true}, want{"req.since-until-inclusive": results.CheckFail}},
		{"limit ends the subscription", testrelay.Config{LimitEndsSubscription: true},
			want{"req.limit-zero": results.CheckFail, "req.limit-filled-live": results.CheckFail}},
		{"ephemeral stored", testrelay.Config{StoreEphemeral: true}, want{"ephemeral.not-stored": results.CheckNamed}},
		{"no OK for ephemeral", testrelay.Config{NoOKForEphemeral: true},
			want{"ephemeral.ok": results.CheckFail, "ephemeral.live": results.CheckPass, "ephemeral.not-stored": results.CheckPass}},
		{"duplicate OK false", testrelay.Config{DuplicateOKFalse: true}, want{"event.duplicate-ok-true": results.CheckNamed}},
		{"no CLOSED for a malformed REQ", testrelay.Config{NoClosedForMalformed: true}, want{"req.malformed-closed": results.CheckFail}},
		{"superseded versions kept", testrelay.Config{KeepSuperseded: true},
			want{"replaceable.latest-stored": results.CheckNamed, "replaceable.tie-lowest-id": results.CheckNamed, "addressable.tie-lowest-id": results.CheckNamed}},
		{"ties by arrival", testrelay.Config{TiesByArrival: true},
			want{"req.limit-tie-lowest-id": results.CheckNamed, "replaceable.tie-lowest-id": results.CheckNamed, "addressable.tie-lowest-id": results.CheckNamed,
				"replaceable.latest-stored": results.CheckPass, "req.order-no-limit": results.CheckPass}},
		{"no EOSE", testrelay.Config{NoEOSEAfter: 1}, want{"req.close-then-reuse": results.CheckUnknown, "req.same-id-replaces": results.CheckUnknown}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // the knobs that leave answers out cost a Timeout each, idle
			got := runEach(t, tc.cfg, nil)
			for id, w := range tc.want {
				if c := got[id]; c.Status != w {
					t.Errorf("%s: %s, want %s", id, describe(c), w)
				}
			}
			for id, c := range got {
				if _, ok := tc.want[id]; !ok && c.Status == results.CheckFail {
					t.Errorf("%s failed too: %s", id, describe(c))
				}
			}
		})
	}
}

// A relay that refuses every EVENT: the checks that need stored events are
// not run, never failed.
func TestRefusedEventsNotRun(t *testing.T) {
	r := testrelay.New(testrelay.Config{RefuseEvery: 1})
	defer r.Close()
	got := runAll(t, r.URL(), nil, "req.multi-filter-union", "req.tag-value-exact", "req.limit-zero")
	for id, c := range got {
		if c.Status != results.CheckNotRun || !strings.Contains(c.Detail, "blocked") {
			t.Errorf("%s: %s, want not-run naming the refusal", id, describe(c))
		}
	}
}

// A relay that answers every REQ endlessly, without EOSE: every check
// ends, none fails, and what the client holds stays bounded (the probe
// closes a connection whose unread frames pass their cap).
func TestEndlessAnswersBounded(t *testing.T) {
	r := testrelay.New(testrelay.Config{EndlessAnswers: true})
	defer r.Close()
	for id, c := range runAll(t, r.URL(), nil, "req.multi-filter-union", "req.close-then-reuse", "req.limit-filled-live") {
		if c.Status != results.CheckUnknown {
			t.Errorf("%s: %s, want unknown", id, describe(c))
		}
	}
}

// Evidence is bounded and holds what was sent and received.
func TestEvidenceBounded(t *testing.T) {
	r := testrelay.New(testrelay.Config{})
	defer r.Close()
	got := runAll(t, r.URL(), nil, "req.close-then-reuse")
	c := got["req.close-then-reuse"]
	size := 0
	for _, l := range c.Evidence {
		size += len(l)
	}
	if size > evidenceBytes+2*evidenceFrame || !c.EvidenceCut {
		t.Errorf("evidence %d bytes, cut %v", size, c.EvidenceCut)
	}
	if !strings.HasPrefix(c.Evidence[0], "> [\"EVENT\"") {
		t.Errorf("evidence starts %q", c.Evidence[0])
	}
}

// An unreachable relay: not run or unknown, never fail; an unknown check
// id is an error.
func TestUnreachableAndBadOptions(t *testing.T) {
	srv := httptest.NewServer(nil)
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	srv.Close()
	got, err := Run(testCtx(t), url, nil, Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range got {
		if c.Status != results.CheckNotRun && c.Status != results.CheckNotAnnounced {
			t.Errorf("%s: %s against a closed port, want not-run", c.ID, describe(c))
		}
	}
	if _, err := Run(testCtx(t), url, nil, Options{Only: []string{"no.such"}}); err == nil {
		t.Error("unknown check id accepted")
	}
}

func integration(t *testing.T) {
	if os.Getenv("RELAYBENCH_INTEGRATION") != "1" || testing.Short() {
		t.Skip("integration test: set RELAYBENCH_INTEGRATION=1")
	}
}

// The embedded relay (native store) passes every MUST.
func TestEmbeddedNativeMUSTs(t *testing.T) {
	integration(t)
	url, info := embedded(t, "native")
	for id, c := range runAll(t, url, info) {
		if c.Status == results.CheckFail {
			t.Errorf("%s: %s", id, describe(c))
		}
	}
}

// embedded starts the embedded relay with store on 127.0.0.1, closed when
// the test ends, and returns its URL and NIP-11 document.
func embedded(t *testing.T, store string) (string, *nip11.Info) {
	t.Helper()
	url := testkit.EmbeddedURL(t, store)
	info, _, err := nip11.Fetch(testCtx(t), url)
	if err != nil {
		t.Fatal(err)
	}
	return url, info
}

// TestEmbeddedStoresReport runs every check against each other embedded
// store and logs each one's statuses (a report for the README's table; the
// stores' known wrong answers are documented in relay/embedded). Stores
// from RELAYBENCH_CONFORMANCE_STORES (default badger,lmdb,sqlite3,memory).
func TestEmbeddedStoresReport(t *testing.T) {
	integration(t)
	stores := os.Getenv("RELAYBENCH_CONFORMANCE_STORES")
	if stores == "" {
		stores = "badger,lmdb,sqlite3,memory"
	}
	for _, store := range strings.Split(stores, ",") {
		t.Run(store, func(t *testing.T) {
			url, info := embedded(t, store)
			got := runAll(t, url, info)
			var line []string
			for _, c := range Checks() {
				line = append(line, c.ID+"="+string(got[c.ID].Status))
			}
			t.Logf("khatru-%s: %s", store, strings.Join(line, " "))
		})
	}
}

// needs is the NIP check id needs announced (0: none).
func needs(id string) int {
	for _, c := range Checks() {
		if c.ID == id {
			return c.Needs
		}
	}
	return -1
}
