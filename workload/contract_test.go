package workload

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

// TestEveryWorkloadKeepsTheBooks runs every registered workload, with
// small options (shrunk by reflection, see smallOptions), against an
// honest relay and against relays that misbehave, and checks on every
// phase the invariants every workload owes (checkBooks): accounts add up
// to what was requested, counters and latency samples mirror what was
// credited, nothing unverified passes, an unknown outcome is never wrong;
// and, per relay, that its misbehaviour is caught where it can be
// (relayCase.detect). A workload registered later is run and checked
// without any change here.
func TestEveryWorkloadKeepsTheBooks(t *testing.T) {
	if testing.Short() {
		t.Skip("every workload on every relay: about 30 s")
	}
	t.Parallel() // beside the package's other parallel tests, which also mostly wait
	decls := Registered()
	if len(decls) == 0 {
		t.Fatal("no workload registered")
	}
	c := smallCorpus(t)
	for _, rc := range relayCases {
		for _, d := range decls {
			for _, m := range modes(d) {
				// Parallel: each case has its own relay, and most of a
				// case's time is spent waiting for answers that do not come.
				t.Run(rc.name+"/"+d.Name+m.name, func(t *testing.T) {
					t.Parallel()
					for _, ph := range runCase(t, rc, d, m, c) {
						logPhase(t, ph)
						checkBooks(t, rc, ph)
						if rc.detect != nil {
							rc.detect(t, ph)
						}
					}
				})
			}
		}
	}
}

// relayCase is one relay the workloads run against.
type relayCase struct {
	name string
	cfg  testrelay.Config
	// embedded runs the embedded relay (native store) instead of the test
	// relay: honest, and it announces NIP-45, 50 and 77, so the NIP
	// workloads the test relay skips run there.
	embedded bool
	// timeout is each wait for an answer (Base.Timeout): a hang guard on
	// a relay that answers, the cost of each unanswered operation on one
	// that does not.
	timeout time.Duration
	// wait, when set, is every other wait for the relay (a field named
	// …Timeout, …Grace, …Lateness, …Drain; see smallOptions): on an honest
	// relay, a late delivery on a busy machine must not count as missing.
	// Zero keeps the workload's defaults (a relay whose deliveries never
	// come costs each wait in full).
	wait time.Duration
	// unknown leaves the last corpus events without a decisive answer in
	// the model (half of them stored after all, half lost), as a publish
	// phase whose OKs never came does.
	unknown bool
	// honest: the relay breaks no rule (a workload must not fail on it).
	honest bool
	// cancelAfter, when set, is the user's Ctrl-C: the run is cancelled
	// once the relay has received this many messages.
	cancelAfter int
	// wrongOK says whether a reason the judge gives for calling phase ph
	// wrong is this relay's misbehaviour (nil: no phase may be wrong).
	wrongOK func(ph results.Phase, reason string) bool
	// detect checks that the misbehaviour was caught where a phase could
	// see it (nil: it cannot be told apart from an honest relay's work).
	detect func(t *testing.T, ph results.Phase)
}

var relayCases = []relayCase{
	{name: "honest", honest: true, timeout: 10 * time.Second, wait: 10 * time.Second},
	{name: "embedded", embedded: true, honest: true, timeout: 10 * time.Second, wait: 10 * time.Second},
	// Every REQ answered CLOSED: no query, subscription or read-back is
	// credited, and no verification passes.
	{name: "refuse-reqs", cfg: testrelay.Config{RefuseAllREQs: true}, timeout: 10 * time.Second, detect: detectRefusedREQs},
	// Every event the relay sends is corrupted: an answer that holds an
	// event, or should, fails verification.
	// (No valid delivery ever comes: each wait for one is cut short.)
	{name: "invalid-events", cfg: testrelay.Config{InvalidEvery: 1}, timeout: 10 * time.Second, wait: 500 * time.Millisecond, wrongOK: reasonMentions("verification failed"), detect: detectInvalid},
	// The first 3 EVENTs are answered, every later one is lost without an
	// answer; the corpus has unknown events: timed out, never wrong.
	{name: "lost-unanswered", cfg: testrelay.Config{NeverOKAfter: 3, LoseUnanswered: true}, timeout: 500 * time.Millisecond, wait: 500 * time.Millisecond, unknown: true, detect: detectUnanswered},
	// An OK true for an id never sent after every OK: a NIP-01 violation.
	{name: "foreign-oks", cfg: testrelay.Config{ForeignOKEvery: 1}, timeout: 10 * time.Second, wrongOK: reasonMentions("OKs for events never sent"), detect: detectForeignOKs},
	// The relay announces NIP-45, 50 and 77 and implements none: COUNTs and
	// NEG-OPENs go unanswered (timed out: unknown, never wrong), searches
	// get events that do not hold the term (wrong).
	{name: "claims-nips", cfg: testrelay.Config{NIP11: map[string]any{"supported_nips": []int{1, 11, 45, 50, 77}}},
		timeout: 500 * time.Millisecond, wrongOK: searchFailed, detect: detectUnimplemented},
	// Every third EVENT refused ("blocked:"): refused, by class, never
	// expected in an answer.
	{name: "refuse-events", cfg: testrelay.Config{RefuseEvery: 3}, timeout: 10 * time.Second, detect: detectRefusedEvents},
	// On each connection, EVENTs and REQs past the 4th are refused
	// ("rate-limited:", OK false or CLOSED).
	{name: "rate-limited", cfg: testrelay.Config{RateLimitAfter: 4, RateLimitREQAfter: 4}, timeout: 10 * time.Second, detect: detectRateLimited},
	// An honest relay, and the user stops the run midway: what was not
	// done is cancelled, never blamed on the relay.
	{name: "user-cancels", cancelAfter: 8, timeout: 10 * time.Second, wait: 10 * time.Second, detect: detectCancelled},
	// Every connection is dropped (no close frame) at its 5th message:
	// connection lost is unknown, never wrong.
	{name: "drop-connections", cfg: testrelay.Config{CloseAfter: 5}, timeout: 10 * time.Second},
}

// caseDeadline bounds one workload's run: a hang guard, far above what a
// small run takes on a busy machine.
const caseDeadline = 50 * time.Second

// runCase starts rc's relay, gives it the corpus when d needs one, and
// runs d in mode m with small options; it returns d's phases.
func runCase(t *testing.T, rc relayCase, d Decl, m mode, c *corpus.Corpus) []results.Phase {
	guard, cancel := context.WithTimeout(context.Background(), caseDeadline)
	defer cancel()
	ctx := guard
	url, tr := rc.start(t)
	env := Env{URL: url, Corpus: c, Log: testLogWriter{t}}
	if info, _, err := nip11.Fetch(ctx, url); err == nil {
		env.Info = info
	}
	if d.Input == NeedsCorpus {
		env.Model = rc.seed(ctx, t, url, tr, c)
		env.Live = env.Model.Live
	}
	cfg := d.New()
	smallOptions(cfg, rc.timeout, rc.wait)
	m.set(cfg)
	if rc.cancelAfter > 0 {
		ctx = cancelOnce(ctx, func() bool { return tr.Stats().Messages >= rc.cancelAfter })
	}
	phases, err := d.Workload(cfg).Run(ctx, env)
	if guard.Err() != nil {
		t.Fatalf("%s did not end within %v (hang guard)", d.Name, caseDeadline)
	}
	if err != nil {
		if rc.honest && ctx.Err() == nil {
			t.Fatalf("%s on an honest relay: %v", d.Name, err)
		}
		t.Logf("%s returned: %v", d.Name, err)
	}
	if len(phases) == 0 && err == nil {
		t.Fatalf("%s returned no phase and no error", d.Name)
	}
	return phases
}

// start starts rc's relay, closed when the test ends: its URL, and the
// test relay (nil for the embedded one).
func (rc relayCase) start(t *testing.T) (string, *testrelay.Relay) {
	if rc.embedded {
		return embeddedURL(t, "native"), nil
	}
	r := testrelay.Start(t, rc.cfg)
	return r.URL(), r
}

// seed gives the relay the corpus and returns the model of what it holds.
// The test relay gets the events directly (its misbehaviour is for the
// workload, not for this set-up); the embedded relay gets them published.
// With rc.unknown, the last unknownTail events are unknown to the model:
// the relay holds every other one of them.
func (rc relayCase) seed(ctx context.Context, t *testing.T, url string, tr *testrelay.Relay, c *corpus.Corpus) *verify.Model {
	if tr == nil {
		return publishedModel(ctx, t, url, c)
	}
	known := c.Events
	var unknown []*nostr.Event
	if rc.unknown {
		known, unknown = c.Events[:len(c.Events)-unknownTail], c.Events[len(c.Events)-unknownTail:]
	}
	tr.Add(known...)
	for i, ev := range unknown {
		if i%2 == 0 {
			tr.Add(ev)
		}
	}
	return verify.NewModelUnknown(known, unknown)
}

const unknownTail = 20

// publishedModel publishes the corpus to url and returns the model of what
// the relay stored, those without a decisive answer unknown (as the
// runner's).
func publishedModel(ctx context.Context, t *testing.T, url string, c *corpus.Corpus) *verify.Model {
	pr, err := Publish(ctx, url, c, all(c), PublishOptions{Base: Base{Timeout: 10 * time.Second}, Connections: 2, Mode: ModePipeline, Window: 64})
	if err != nil {
		t.Fatalf("publish the corpus: %v", err)
	}
	m, _ := outcomeModel(c, pr)
	return m
}

// testLogWriter sends a workload's log lines (a skip) to the test's log.
type testLogWriter struct{ t *testing.T }

func (l testLogWriter) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestNotAnnouncedNamesTheCommand: a NIP workload skipped on a relay that
// does not announce its NIP names --force as its command's, for run
// --workloads (and compare's) has no --force.
func TestNotAnnouncedNamesTheCommand(t *testing.T) {
	for _, name := range []string{"count", "search"} {
		d, ok := Lookup(name)
		if !ok {
			t.Fatalf("%s is not registered", name)
		}
		w := d.Workload(d.New())
		for _, info := range []*nip11.Info{nil, {}} {
			if why := w.Unsupported(info); !strings.HasSuffix(why, "; the "+name+" command's --force runs it anyway") {
				t.Errorf("%s on NIP-11 %v: skipped %q, want --force named as the %s command's", name, info, why, name)
			}
		}
	}
}
