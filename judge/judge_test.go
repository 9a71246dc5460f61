package judge

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/relaybench/relaybench/results"
)

func file(phases ...results.Phase) *results.File {
	return &results.File{Runs: []results.Run{{Relay: results.Relay{URL: "ws://127.0.0.1:1"}, Phases: phases}}}
}

func events(acc, ref, to, lost, notRun, canc int64, refusedBy map[string]int64) results.Account {
	a := results.Account{Op: results.OpEvent, Accepted: acc, Refused: ref, TimedOut: to, ConnLost: lost, NotRun: notRun, Cancelled: canc, RefusedBy: refusedBy}
	if notRun > 0 {
		a.NotRunBy = map[string]int64{"connection gone": notRun}
	}
	a.Requested = a.Total()
	return a
}

func TestJudge(t *testing.T) {
	passed := &results.Verification{Verified: true, Passed: true, Checked: 1}
	failed := &results.Verification{Verified: true, Missing: 3}
	cases := []struct {
		name        string
		f           *results.File
		interrupted bool
		errs        []error
		status      int
		reason      string
	}{
		{"all done, all checked", file(results.Phase{Name: "publish", Accounts: []results.Account{events(10, 0, 0, 0, 0, 0, nil)}},
			results.Phase{Name: "query", Verification: passed}), false, nil, Passed, ""},
		{"duplicate and replaced refusals are correct answers", file(results.Phase{Name: "publish",
			Accounts: []results.Account{events(8, 2, 0, 0, 0, 0, map[string]int64{"duplicate": 1, "replaced": 1})}}), false, nil, Passed, ""},
		{"rate-limited is work the relay prevented", file(results.Phase{Name: "publish",
			Accounts: []results.Account{events(5, 5, 0, 0, 0, 0, map[string]int64{"rate-limited": 5})}}), false, nil, Incomplete, "5 refused (rate-limited)"},
		{"connection lost and not run", file(results.Phase{Name: "publish",
			Accounts: []results.Account{events(500, 0, 0, 10, 1490, 0, nil)}}), false, nil, Incomplete, "1,490 not run"},
		{"stopped early", file(results.Phase{Name: "query", Aborted: "3 queries ended without EOSE in a row"}), false, nil, Incomplete, "stopped early"},
		{"wrong answers beat incomplete", file(results.Phase{Name: "query", Verification: failed,
			Accounts: []results.Account{events(5, 0, 5, 0, 0, 0, nil)}}), false, nil, WrongAnswers, "3 missing"},
		{"malformed frames are a NIP-01 violation", file(results.Phase{Name: "publish", Counts: map[string]int64{"malformed_frames": 2}}), false, nil, WrongAnswers, "malformed"},
		{"late OKs after a timeout are not a violation", file(results.Phase{Name: "publish", Counts: map[string]int64{"unmatched_oks": 2},
			Accounts: []results.Account{events(0, 0, 0, 0, 0, 2, nil)}}), true, nil, Interrupted, ""},
		{"interrupt is never the relay's fault", file(results.Phase{Name: "publish",
			Accounts: []results.Account{events(5, 0, 0, 0, 0, 5, nil)}}), true, nil, Interrupted, "5 cancelled"},
		{"unbalanced account is relaybench's bug, reported", file(results.Phase{Name: "publish",
			Accounts: []results.Account{{Op: results.OpEvent, Requested: 10, Accepted: 9}}}), false, nil, WrongAnswers, "ACCOUNTING ERROR"},
		// Work the client could not start is work that did not run: never
		// passed, never blamed on the relay (error, exit 1).
		{"client drops are the client's limit, not passed", file(results.Phase{Name: "load", Accounts: []results.Account{{Op: results.OpEvent, Requested: 10, Accepted: 7, NotRun: 3,
			NotRunBy: map[string]int64{"client-limited: not started in time": 3}}}}), false, nil, Error,
			"relaybench could not run the requested work: load: 3 operations not started, the client was the limit (not started in time)"},
		{"drops with every slot waiting on the relay are the relay's", file(results.Phase{Name: "load", Accounts: []results.Account{{Op: results.OpEvent, Requested: 10, Accepted: 7, NotRun: 3,
			NotRunBy: map[string]int64{"relay-limited: pool full": 3}}}}), false, nil, Incomplete, "load: 10 events: 7 accepted, 3 not run (relay-limited: pool full)"},
		{"the relay's share beats the client's", file(results.Phase{Name: "load", Accounts: []results.Account{{Op: results.OpEvent, Requested: 10, Accepted: 6, NotRun: 4,
			NotRunBy: map[string]int64{"relay-limited: pool full": 3, "client-limited: not started in time": 1}}}}), false, nil, Incomplete, "3 relay-limited: pool full"},
		{"client drops before an interrupt", file(results.Phase{Name: "load", Accounts: []results.Account{{Op: results.OpEvent, Requested: 10, Accepted: 5, NotRun: 3, Cancelled: 2,
			NotRunBy: map[string]int64{"client-limited: not started in time": 3}}}}), true, nil, Interrupted, ""},
		{"find-max's client drops are its measurement", file(results.Phase{Name: "find-max", Workload: "find-max", Rates: map[string]float64{"max_rate": 800},
			Accounts: []results.Account{{Op: results.OpEvent, Requested: 10, Accepted: 7, NotRun: 3,
				NotRunBy: map[string]int64{"client-limited: not started in time": 3}}}}), false, nil, Passed, ""},
		{"find-max failing steps are the measurement", file(results.Phase{Name: "find-max", Workload: "find-max", Rates: map[string]float64{"max_rate": 800},
			Accounts: []results.Account{events(50, 0, 20, 0, 0, 0, nil)}}), false, nil, Passed, ""},
		{"find-max with no passing rate", file(results.Phase{Name: "find-max", Workload: "find-max", Rates: map[string]float64{"max_rate": 0},
			Accounts: []results.Account{events(50, 20, 0, 0, 0, 0, map[string]int64{"rate-limited": 20})}}), false, nil, Incomplete, "no rate passed"},
		{"a stalled find-max is incomplete", file(results.Phase{Name: "find-max", Workload: "find-max", Aborted: "3 EVENTs without an OK in a row",
			Accounts: []results.Account{events(50, 0, 3, 0, 0, 0, nil)}}), false, nil, Incomplete, "stopped early"},
		{"nothing checked is not verified, never passed", file(results.Phase{Name: "query",
			Verification: &results.Verification{Verified: true, Passed: true}}), false, nil, Incomplete, "not verified"},
		{"nothing checked, as written by an old build", file(results.Phase{Name: "query",
			Verification: &results.Verification{Verified: false, Passed: true, Notes: []string{"old file"}}}), false, nil, Incomplete, "no answer was checked"},
		{"nothing checked because the user cancelled is not the relay's doing", file(results.Phase{Name: "query",
			Verification: &results.Verification{Verified: true}, Accounts: []results.Account{events(0, 0, 0, 0, 0, 6, nil)}}), true, nil, Interrupted, ""},
		{"counts in the reasons are grouped as the summary prints them", file(results.Phase{Name: "negentropy/steady",
			Verification: &results.Verification{Verified: true, Checked: 10, Missing: 330, Extra: 466020}}), false, nil, WrongAnswers, "(330 missing, 466,020 extra)"},
		{"a failed check beats not verified", file(results.Phase{Name: "query",
			Verification: &results.Verification{Verified: true, Invalid: 2}}), false, nil, WrongAnswers, "2 invalid"},
		{"a requested workload skipped did not run: never passed", file(results.Phase{Name: "publish", Accounts: []results.Account{events(10, 0, 0, 0, 0, 0, nil)}},
			results.Phase{Name: "count", Workload: "count", Skipped: "the relay does not announce NIP-45 (COUNT)"}), false, nil, Incomplete, "count: skipped: the relay does not announce NIP-45"},
		{"a skip beside wrong answers is still wrong answers", file(results.Phase{Name: "query", Verification: failed},
			results.Phase{Name: "search", Skipped: "no NIP-50"}), false, nil, WrongAnswers, "search: skipped: no NIP-50"},
		{"run error", &results.File{Runs: []results.Run{{Errors: []string{"relay died: the relay process exited"}}}}, false, nil, Incomplete, "relay died"},
		{"the relay's death is the first reason", &results.File{Runs: []results.Run{{Errors: []string{"relay died during load: OOM-killed under mem=256M"},
			Phases: []results.Phase{{Name: "load", Accounts: []results.Account{events(5, 0, 0, 5, 0, 0, nil)}}}}}}, false, nil, Incomplete, "relay died during load"},
		{"no run at all", &results.File{}, false, []error{errors.New("cannot start relay")}, Error, "cannot start relay"},
		{"empty file", &results.File{}, false, nil, Error, "no run"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Judge(c.f, c.interrupted, c.errs...)
			if v.Status != c.status {
				t.Fatalf("status %d (%s), want %d: %v", v.Status, v.Outcome, c.status, v.Reasons)
			}
			if c.reason != "" && !strings.Contains(strings.Join(v.Reasons, "\n"), c.reason) {
				t.Fatalf("reasons %q lack %q", v.Reasons, c.reason)
			}
			if strings.HasPrefix(c.reason, "relay died during") && !strings.HasPrefix(v.Reasons[0], c.reason) {
				t.Fatalf("reasons %q: want %q first", v.Reasons, c.reason)
			}
			if c.status == Interrupted {
				for _, r := range v.Reasons {
					if strings.Contains(r, "timed out") || strings.Contains(r, "verification failed") || strings.Contains(r, "not verified") {
						t.Fatalf("an interrupt blamed on the relay: %q", r)
					}
				}
			}
			if v.Outcome != Name(v.Status) || Summary(v) == "" {
				t.Fatalf("outcome %q summary %q", v.Outcome, Summary(v))
			}
		})
	}
}

func TestJudgeNamesTheRelayInAComparison(t *testing.T) {
	f := &results.File{Runs: []results.Run{
		{Relay: results.Relay{Name: "good"}, Phases: []results.Phase{{Name: "query", Verification: &results.Verification{Passed: true, Checked: 1}}}},
		{Relay: results.Relay{Name: "bad"}, Phases: []results.Phase{{Name: "query", Verification: &results.Verification{Invalid: 1}}}},
	}}
	v := Judge(f, false)
	if v.Status != WrongAnswers || len(v.Reasons) != 1 || !strings.HasPrefix(v.Reasons[0], "bad query:") {
		t.Fatalf("%+v", v)
	}
}

func TestJudgeNamesTheRelayThatSkippedAWorkload(t *testing.T) {
	ok := results.Phase{Name: "count", Workload: "count", Accounts: []results.Account{{Op: results.OpCount, Requested: 1, Accepted: 1}},
		Verification: &results.Verification{Verified: true, Passed: true, Checked: 1}}
	f := &results.File{Runs: []results.Run{
		{Relay: results.Relay{Name: "counts"}, Phases: []results.Phase{ok}},
		{Relay: results.Relay{Name: "nocount"}, Phases: []results.Phase{{Name: "count", Workload: "count", Skipped: "the relay does not announce NIP-45"}}},
	}}
	v := Judge(f, false)
	if v.Status != Incomplete || len(v.Reasons) != 1 || !strings.HasPrefix(v.Reasons[0], "nocount count: skipped: ") {
		t.Fatalf("%+v", v)
	}
}

// The one-line summary (the last line on stderr) keeps each reason short;
// the verdict keeps it whole.
func TestSummaryClipsLongReasons(t *testing.T) {
	long := "threshold publish.okk.p99<20ms: no figure publish.okk.p99 in the results; publish has " + strings.Repeat("ok.p50, ", 80)
	v := results.Verdict{Status: Usage, Outcome: "usage", Reasons: []string{long, "short reason"}}
	s := Summary(v)
	if len(s) > 2*summaryReason || !strings.Contains(s, "no figure publish.okk.p99 in the results; publish has") ||
		!strings.Contains(s, " …; short reason") {
		t.Fatalf("summary %d bytes: %q", len(s), s)
	}
	if v.Reasons[0] != long {
		t.Fatal("the verdict's reason was changed")
	}
	if got := clip(strings.Repeat("é", 300)); !utf8.ValidString(got) {
		t.Fatalf("clipped inside a rune: %q", got)
	}
}
