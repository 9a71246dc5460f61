// Package conformance checks how a relay answers the messages real clients
// send (NIP-01 and, where the relay announces them in NIP-11
// supported_nips, NIP-09, 11, 40, 42, 45, 50 and 77): several filters in
// one REQ, a subscription id reused while open or after CLOSE, limit 0,
// ids beside other conditions, tag values that are prefixes of others,
// since/until at created_at, created_at ties, replaceable and addressable
// ties, ephemeral events, duplicates, malformed REQs, deletion and expiry;
// the NIP-11 document and its CORS headers; NIP-42 AUTH; COUNT; search;
// negentropy reconciliation.
//
// Each check rests on one NIP sentence, quoted exactly, and ends in exactly
// one status (results.CheckStatus): pass; fail when a MUST is violated;
// named when the relay differs from a SHOULD or MAY; not announced; not run
// (the relay refused what the check needs); unknown (no decisive answer: a
// wait ran out). Every check signs its own fresh events with fresh keys and
// unique tag values, on its own connections, so checks depend neither on
// what the relay holds nor on each other. Every wait has a deadline
// (Options.Timeout) and nothing a relay sends can grow past fixed bounds.
package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

// DefaultTimeout is how long a check waits for any one answer.
const DefaultTimeout = 5 * time.Second

// Levels of a sentence.
const (
	MUST   = "MUST"
	SHOULD = "SHOULD"
	MAY    = "MAY"
)

// Options configure a run.
type Options struct {
	// Timeout bounds each wait for one answer (an OK, an EOSE, a live
	// event); default DefaultTimeout. It is a hang guard: a relay slower
	// than this gets unknown, never fail.
	Timeout time.Duration
	// Only, when not empty, runs only the checks with these IDs.
	Only []string
	// Signing overrides how fresh events are signed (zero: the default
	// signer).
	Signing corpus.Options
	// Auth, when set, answers the relay's NIP-42 challenges on every
	// connection of a check: when the relay refuses an EVENT or REQ with
	// "auth-required:" (AuthAlways: at once), a probe sends AUTH with the
	// event Auth signs, waits for its OK and sends the refused message
	// again, once (see auth.go). Nil: an auth-required refusal is a
	// refusal, and the check is not run.
	Auth       AuthFunc
	AuthAlways bool
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// Check declares one conformance check.
type Check struct {
	ID       string // stable name, e.g. "req.multi-filter-union"
	NIP      int    // the NIP the sentence is from
	Level    string // MUST, SHOULD or MAY
	Sentence string // the NIP text, quoted exactly
	// Needs is the NIP the relay must announce in NIP-11 supported_nips
	// for the check to run (0: none, NIP-01 is assumed).
	Needs int
	run   func(t *checkRun) outcome
}

// Checks returns every check, in the order Run runs them.
func Checks() []Check { return append([]Check(nil), all...) }

// Run runs the checks against the relay at url, one after the other, and
// returns one results.Check per check, in the order of Checks. info is the
// relay's NIP-11 document (nil: none, every check that needs a NIP is then
// not announced). The error is non-nil only when ctx ends or opts are
// wrong; a relay that cannot be reached gives checks that were not run.
func Run(ctx context.Context, url string, info *nip11.Info, opts Options) ([]results.Check, error) {
	opts = opts.withDefaults()
	want := map[string]bool{}
	for _, id := range opts.Only {
		if !slices.ContainsFunc(all, func(c Check) bool { return c.ID == id }) {
			return nil, fmt.Errorf("conformance: no check %q", id)
		}
		want[id] = true
	}
	var out []results.Check
	for _, c := range all {
		if len(want) > 0 && !want[c.ID] {
			continue
		}
		out = append(out, RunCheck(ctx, c, url, info, opts))
		if err := ctx.Err(); err != nil {
			return out, err
		}
	}
	return out, nil
}

// RunCheck runs one check.
func RunCheck(ctx context.Context, c Check, url string, info *nip11.Info, opts Options) results.Check {
	opts = opts.withDefaults()
	r := results.Check{ID: c.ID, NIP: c.NIP, Level: c.Level, Sentence: c.Sentence}
	if c.Needs != 0 && (info == nil || !info.SupportsNIP(c.Needs)) {
		r.Status = results.CheckNotAnnounced
		r.Detail = fmt.Sprintf("the relay does not announce NIP-%02d in its NIP-11 supported_nips", c.Needs)
		return r
	}
	t := &checkRun{ctx: ctx, url: url, info: info, opts: opts, log: &evidence{}, nonce: nonce(), checker: verify.NewChecker()}
	start := time.Now()
	o := func() (o outcome) {
		defer t.closeAll()
		return c.run(t)
	}()
	if o.status == "" || (o.status == results.CheckFail && c.Level != MUST) {
		o.status = results.CheckNamed // only a MUST fails
	}
	if ctx.Err() != nil && o.status != results.CheckPass {
		o = outcome{results.CheckUnknown, "cancelled: " + o.detail}
	}
	r.Status, r.Detail = o.status, o.detail
	r.Millis = time.Since(start).Milliseconds()
	t.log.mu.Lock()
	r.Evidence, r.EvidenceCut = t.log.lines, t.log.cut
	t.log.mu.Unlock()
	return r
}

// outcome is how a check's run ended.
type outcome struct {
	status results.CheckStatus
	detail string
}

func pass() outcome { return outcome{status: results.CheckPass} }

func fail(format string, a ...any) outcome {
	return outcome{results.CheckFail, fmt.Sprintf(format, a...)}
}

func named(format string, a ...any) outcome {
	return outcome{results.CheckNamed, fmt.Sprintf(format, a...)}
}

func unknown(format string, a ...any) outcome {
	return outcome{results.CheckUnknown, fmt.Sprintf(format, a...)}
}

func notRun(format string, a ...any) outcome {
	return outcome{results.CheckNotRun, fmt.Sprintf(format, a...)}
}

// undecided turns an error of the check's machinery into its outcome: a
// refusal of what the check needs, or no connection, is not run; anything
// else (a wait that ran out, a connection lost) unknown.
func undecided(err error) outcome {
	var r *refusedError
	var c *closedError
	var d *dialError
	if errors.As(err, &r) || errors.As(err, &c) || errors.As(err, &d) {
		return notRun("%v", err)
	}
	return unknown("%v", err)
}

// checkRun is what a check's run works with: its connections, fresh keys and
// events, and its evidence log.
type checkRun struct {
	ctx     context.Context
	url     string
	info    *nip11.Info // the relay's NIP-11 document (nil: none)
	opts    Options
	log     *evidence
	nonce   string
	probes  []*probe
	pub     *probe
	checker *verify.Checker
	oks     map[string]ok // every OK read on the publishing connection, by event id
}

func nonce() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// tag returns a tag value unique to this run of the check.
func (t *checkRun) tag(name string) string { return "rbc-" + t.nonce + "-" + name }

// conn opens a new connection for the check.
func (t *checkRun) conn() (*probe, error) {
	p, err := dial(t.ctx, t.url, t.log, t.opts)
	if err != nil {
		return nil, err
	}
	t.probes = append(t.probes, p)
	return p, nil
}

// rawConn opens a new connection that leaves NIP-42 to the check (the
// challenge, the AUTH's OK and auth-required refusals are the check's to
// read, whatever Options.Auth says).
func (t *checkRun) rawConn() (*probe, error) {
	o := t.opts
	o.Auth, o.AuthAlways = nil, false
	p, err := dial(t.ctx, t.url, t.log, o)
	if err != nil {
		return nil, err
	}
	t.probes = append(t.probes, p)
	return p, nil
}

func (t *checkRun) closeAll() {
	for _, p := range t.probes {
		p.close()
	}
}

// wait is a context for one wait: Timeout from now.
func (t *checkRun) wait() (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.ctx, t.opts.Timeout)
}

// key is a fresh signing key.
func (t *checkRun) key() *corpus.Author {
	a := &corpus.Author{}
	_, _ = rand.Read(a.Secret[:])
	return a
}

// sign signs evs, evs[i] with keys[i] (one key for all if len(keys) == 1).
func (t *checkRun) sign(keys []*corpus.Author, evs ...*nostr.Event) error {
	ks := make([]*corpus.Author, len(evs))
	for i := range ks {
		ks[i] = keys[min(i, len(keys)-1)]
	}
	return corpus.SignEvents(t.ctx, evs, ks, t.opts.Signing)
}

// note builds an event of kind with tags, created_at at.
func note(kind int, at int64, content string, tags ...nostr.Tag) *nostr.Event {
	return &nostr.Event{Kind: kind, CreatedAt: at, Content: content, Tags: tags}
}

// now is the current unix time.
func now() int64 { return time.Now().Unix() }

// refusedError: the relay refused an event the check needs.
type refusedError struct{ id, reason string }

func (e *refusedError) Error() string {
	return fmt.Sprintf("the relay refused an event the check needs (%.16s…: %q)", e.id, e.reason)
}

// ok is the relay's answer to one EVENT.
type ok struct {
	accepted bool
	reason   string
}

// publisher is the check's connection for EVENTs (opened on first use).
func (t *checkRun) publisher() (*probe, error) {
	if t.pub == nil {
		p, err := t.conn()
		if err != nil {
			return nil, err
		}
		t.pub = p
	}
	return t.pub, nil
}

// send sends ev on the publishing connection and waits for its OK.
func (t *checkRun) send(ev *nostr.Event) (ok, error) {
	p, err := t.publisher()
	if err != nil {
		return ok{}, err
	}
	if err := p.event(t.ctx, ev); err != nil {
		return ok{}, fmt.Errorf("sending EVENT: %w", err)
	}
	return t.okFor(p, ev.ID)
}

// okFor waits for the OK for id on p (other frames are skipped; the OKs
// among them are kept in t.oks).
func (t *checkRun) okFor(p *probe, id string) (ok, error) {
	var o ok
	err := t.frames(p, fmt.Sprintf("the OK of %.16s…", id), func(f frame) (bool, error) {
		if f.label != "OK" {
			return false, nil
		}
		o = ok{}
		if len(f.parts) > 1 {
			o = ok{string(f.parts[1]) == "true", f.str(2)}
		}
		if t.oks == nil {
			t.oks = map[string]ok{}
		}
		if len(t.oks) < framesQueued {
			t.oks[f.str(0)] = o
		}
		return f.str(0) == id, nil
	})
	if err != nil {
		return ok{}, err
	}
	return o, nil
}

// frames hands p's frames to take, within the check's wait (Timeout),
// until take is done with one or fails (its error returned as it is). A
// read that fails first (the wait over, the connection lost) is "waiting
// for what: …", or its bare error without what.
func (t *checkRun) frames(p *probe, what string, take func(f frame) (done bool, err error)) error {
	ctx, cancel := t.wait()
	defer cancel()
	for {
		f, err := p.next(ctx)
		if err != nil {
			if what == "" {
				return err
			}
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if done, err := take(f); done || err != nil {
			return err
		}
	}
}

// signStore signs evs as sign does, then stores them.
func (t *checkRun) signStore(keys []*corpus.Author, evs ...*nostr.Event) error {
	if err := t.sign(keys, evs...); err != nil {
		return err
	}
	return t.store(evs...)
}

// store publishes evs one after the other and wants each accepted.
func (t *checkRun) store(evs ...*nostr.Event) error {
	for _, ev := range evs {
		o, err := t.send(ev)
		if err != nil {
			return err
		}
		if !o.accepted {
			return &refusedError{ev.ID, o.reason}
		}
	}
	return nil
}

// answerCap is the most events a check reads of one answer: every check
// asks for a handful of its own events.
const answerCap = 1000

// errOverCap: an answer grew past answerCap.
var errOverCap = fmt.Errorf("the relay sent more than %d events for a REQ that matches a handful", answerCap)

// answer is what came back for one subscription until EOSE or CLOSED.
type answer struct {
	events  []*nostr.Event // in arrival order, duplicates kept
	eose    bool
	closed  bool
	reason  string // CLOSED reason
	invalid int    // EVENTs that are not valid events (bad id or signature)
}

// ids returns the answer's event ids in arrival order.
func (a answer) ids() []string {
	out := make([]string, len(a.events))
	for i, e := range a.events {
		out[i] = e.ID
	}
	return out
}

// collect reads p's frames until EOSE or CLOSED for sub; events for sub
// are kept (an invalid one is an error of the check's reading, noted).
func (t *checkRun) collect(p *probe, sub string) (answer, error) {
	var a answer
	err := t.frames(p, fmt.Sprintf("EOSE of %q", sub), func(f frame) (bool, error) {
		if f.str(0) != sub {
			return false, nil
		}
		switch f.label {
		case "EVENT":
			if len(a.events)+a.invalid >= answerCap {
				return false, errOverCap
			}
			if ev := t.event(f); ev != nil {
				a.events = append(a.events, ev)
			} else {
				a.invalid++
			}
		case "EOSE":
			a.eose = true
			return true, nil
		case "CLOSED":
			a.closed, a.reason = true, f.str(1)
			return true, nil
		}
		return false, nil
	})
	return a, err
}

// query opens a REQ on a new connection and collects its answer.
func (t *checkRun) query(sub string, filters ...nostr.Filter) (answer, error) {
	p, err := t.conn()
	if err != nil {
		return answer{}, err
	}
	if err := p.req(t.ctx, sub, filters...); err != nil {
		return answer{}, err
	}
	a, err := t.collect(p, sub)
	if err == nil && a.closed { // an empty answer that says nothing
		err = &closedError{a.reason}
	}
	return a, err
}

// closedError: the relay refused a REQ the check needs (CLOSED).
type closedError struct{ reason string }

func (e *closedError) Error() string { return fmt.Sprintf("the relay closed the REQ: %q", e.reason) }

// event parses the event of an EVENT frame and checks its id and
// signature (verify.Checker); nil if it is not a valid event.
func (t *checkRun) event(f frame) *nostr.Event {
	if len(f.parts) < 2 {
		return nil
	}
	ev, valid := t.checker.Check([]byte(f.parts[1]))
	if !valid {
		return nil
	}
	return ev
}

// short is an event id cut for a detail line.
func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func shorts(ids []string) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = short(id)
	}
	return "[" + strings.Join(s, " ") + "]"
}
