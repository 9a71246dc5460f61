package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/fakenip"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

// publishModel publishes the small corpus to url and returns the model of
// what the relay accepted.
func publishModel(t *testing.T, url string) *verify.Model {
	t.Helper()
	_, m := publishSmall(t, url, ModePipeline)
	return m
}

func balanced(t *testing.T, ph results.Phase) {
	t.Helper()
	for _, a := range ph.Accounts {
		if !a.Balanced() {
			t.Errorf("account %s not balanced: %+v", a.Op, a)
		}
	}
}

func TestCountEmbeddedRelay(t *testing.T) {
	url := embeddedURL(t, "native")
	m := publishModel(t, url)
	ph, err := Count(testCtx(t), url, m, m.Live, CountOptions{Base: Base{Timeout: 5 * time.Second, Seed: 3}, Queries: 24, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	v := ph.Verification
	if v == nil || !v.Passed || !v.Verified || v.Checked != 24 {
		t.Fatalf("verification %+v", v)
	}
	if ph.Counts["counts"] != 24 || ph.Counts["count_exact"] != 24 || ph.Counts["count_wrong"] != 0 || ph.Counts["req_queries"] != 24 {
		t.Errorf("counts %v", ph.Counts)
	}
	if ph.Latency["count"] == nil || ph.Latency["count"].Count != 24 || ph.Latency["req_eose"] == nil {
		t.Errorf("latencies %v", ph.Latency)
	}
	if len(ph.Groups) != len(CountShapes) {
		t.Errorf("groups %d, want one per shape", len(ph.Groups))
	}
	// NIP-45's HyperLogLog filters: khatru counts them only from
	// CountEventsHLL, which the embedded relay sets (without it: 0).
	for _, g := range ph.Groups {
		if (g.Name == "followers" || g.Name == "reactions") && (g.Counts["exact"] != 3 || !g.Verification.Passed || g.Counts["events_counted"] == 0) {
			t.Errorf("%s: %v %+v", g.Name, g.Counts, g.Verification)
		}
	}
	if v.Expected != v.Returned || v.Expected == 0 {
		t.Errorf("expected %d counted %d", v.Expected, v.Returned)
	}
}

func TestCountWrongCountsFail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    fakenip.Config
		passed bool
		check  func(t *testing.T, ph results.Phase)
	}{
		{"right", fakenip.Config{}, true, nil},
		{"one too many", fakenip.Config{CountDelta: 1}, false, func(t *testing.T, ph results.Phase) {
			if ph.Verification.Extra != ph.Counts["counts"] || ph.Counts["count_wrong"] != ph.Counts["counts"] {
				t.Errorf("extra %d wrong %d counts %d", ph.Verification.Extra, ph.Counts["count_wrong"], ph.Counts["counts"])
			}
		}},
		{"bare number", fakenip.Config{BareCount: true}, false, func(t *testing.T, ph results.Phase) {
			if ph.Verification.Invalid != ph.Counts["counts"] || ph.Counts["malformed_frames"] != 0 {
				t.Errorf("invalid %d counts %v", ph.Verification.Invalid, ph.Counts)
			}
			if notes := strings.Join(ph.Verification.Notes, "\n"); !strings.Contains(notes, "12 COUNT answers were bare numbers") || !strings.Contains(notes, "12 of them equal") {
				t.Errorf("notes %v", ph.Verification.Notes)
			}
		}},
		{"approximate and off", fakenip.Config{CountDelta: 2, Approximate: true}, true, func(t *testing.T, ph results.Phase) {
			if ph.Counts["count_approximate"] != ph.Counts["counts"] || !strings.Contains(strings.Join(ph.Verification.Notes, "\n"), "approximate counts") {
				t.Errorf("counts %v notes %v", ph.Counts, ph.Verification.Notes)
			}
		}},
		// Every COUNT refused: nothing was checked, which is not a pass.
		{"closed", fakenip.Config{NoCount: true}, false, func(t *testing.T, ph results.Phase) {
			a := ph.Account(results.OpCount)
			if a == nil || a.Refused != 12 || a.RefusedBy["other"] != 12 {
				t.Errorf("account %+v", a)
			}
			if st := ph.Verification.Status(); st != results.VerificationNotVerified {
				t.Errorf("verification %s, want %s", st, results.VerificationNotVerified)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fakenip.Start(tc.cfg)
			defer r.Close()
			m := publishModel(t, r.URL)
			ph, err := Count(testCtx(t), r.URL, m, m.Live, CountOptions{Base: Base{Timeout: 5 * time.Second, Seed: 1}, Queries: 12})
			if err != nil {
				t.Fatal(err)
			}
			balanced(t, ph)
			if ph.Verification.Passed != tc.passed {
				t.Errorf("passed %v, want %v: %+v", ph.Verification.Passed, tc.passed, ph.Verification)
			}
			if tc.check != nil {
				tc.check(t, ph)
			}
		})
	}
}

// A relay that keeps superseded versions counts them: allowed (NIP-01), named.
func TestCountKeepsSupersededVersions(t *testing.T) {
	r := fakenip.Start(fakenip.Config{})
	defer r.Close()
	m := publishModel(t, r.URL) // the fake relay keeps every version
	if len(m.All) == len(m.Live) {
		t.Skip("the corpus has no superseded versions")
	}
	ph, err := Count(testCtx(t), r.URL, m, m.All, CountOptions{Base: Base{Timeout: 5 * time.Second}, Queries: 30})
	if err != nil {
		t.Fatal(err)
	}
	if !ph.Verification.Passed {
		t.Fatalf("verification %+v", ph.Verification)
	}
}

// A relay that never answers COUNT: the phase stops after three COUNTs in a
// row timed out, even with the REQs between them answered, and every COUNT
// has one outcome.
func TestCountSilentRelayAccounted(t *testing.T) {
	r := fakenip.Start(fakenip.Config{SilentCount: true})
	defer r.Close()
	m := publishModel(t, r.URL)
	for _, noReq := range []bool{true, false} {
		ph, err := Count(testCtx(t), r.URL, m, m.Live, CountOptions{Base: Base{Timeout: 100 * time.Millisecond}, Queries: 6, NoReq: noReq})
		if err != nil {
			t.Fatal(err)
		}
		balanced(t, ph)
		a := ph.Account(results.OpCount)
		if a == nil || a.TimedOut != 3 || a.NotRun != 3 || ph.Aborted == "" {
			t.Fatalf("no-req %v: account %+v aborted %q", noReq, a, ph.Aborted)
		}
		if ph.Counts["failed"] != 3 || ph.Counts["timed_out"] != 3 || ph.Verification.Checked != 0 {
			t.Errorf("counts %v verification %+v", ph.Counts, ph.Verification)
		}
	}
}
