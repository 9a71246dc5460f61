package workload

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/flagcheck"
	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/negentropy"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/wire"
)

// OpReconcile is the operation a negentropy phase's account counts: one
// NIP-77 reconciliation, NEG-OPEN to the relay's last NEG-MSG.
const OpReconcile = "reconciliation"

// Negentropy scenarios, in the order they run.
const (
	NegInitial = "initial" // local set: part of the relay's events plus some only the client has
	NegDelta   = "delta"   // local set: everything the relay had before Delta new events
	NegSteady  = "steady"  // local set: exactly the relay's
)

func init() {
	Declare[NegentropyOptions](Decl{Name: "negentropy", Brief: "NIP-77 sync, 5 rounds of 3 scenarios", Input: NeedsCorpus, JudgesSet: true, Adds: true, Unsupported: NegentropySkip,
		Summary: "NIP-77 negentropy sync: publish the corpus, then reconcile local sets with the relay (initial overlap, delta, steady state): time, round trips, bytes, verified convergence."})
}

// NegentropyOptions configure the NIP-77 sync workload. Base's Timeout
// bounds the wait for each relay answer (NEG-MSG, OK of a delta event,
// EOSE). The CLI prefixes the flags with neg- (--neg-rounds).
type NegentropyOptions struct {
	Base      `set:"timeout=30s" set:"timeout_help=How long to wait for each of the relay's NEG-MSG answers."`
	Rounds    int     `name:"rounds" default:"5" help:"Reconciliations per scenario (initial, delta, steady), each from a fresh session: the percentiles are over these."`
	Overlap   float64 `name:"overlap" default:"0.8" help:"Initial scenario: share of the relay's events the local set holds (0 < x ≤ 1)."`
	LocalOnly float64 `name:"local-only" default:"0.1" zero:"keep" help:"Initial scenario: ids only the client has, as a share of the relay's events (0 ≤ x ≤ 1)."`
	Delta     int     `name:"delta" default:"100" help:"Fresh events published between the initial and the delta scenario."`
	// FrameSize is the client's negentropy frame size limit in bytes
	// (binary; twice that in hex on the wire). 0: from the relay's NIP-11
	// max_message_length (half of it, less 1 KiB), else 65,536; -1: unlimited.
	FrameSize int `name:"frame-size" default:"0" placeholder:"BYTES" help:"Client frame size limit of the negentropy protocol in bytes (hex doubles it on the wire); 0: half the relay's NIP-11 max_message_length less 1 KiB (65536 when not announced); -1: unlimited."`
	// Unknown are events published without a decisive answer (OK timed
	// out, connection lost, cancelled): the relay may hold them, so an id
	// of theirs it reports having is neither required nor wrong; nor is an
	// accepted event one of them would supersede (a newer version of a
	// replaceable or addressable event): the relay may hold it or not
	// (default: env's Model.Unknown).
	Unknown []*nostr.Event `kong:"-"`
}

// Run reconciles with env's relay against what the publish phase left on
// it (env.Live); skipped, in one phase, on a relay without NIP-77.
func (o NegentropyOptions) Run(ctx context.Context, env Env) ([]results.Phase, error) {
	applyDefaults(&o)
	if env.Model != nil && o.Unknown == nil {
		o.Unknown = env.Model.Unknown // published without a decisive answer: may be there
	}
	if NegentropySkip(env.Info) == "" {
		o.fromEnv(env, progress.Counting(fmt.Sprintf("Reconciling (NIP-77) with %s", env.URL), "Ran", "round", fmt.Sprintf("rounds (3 scenarios × %s)", numfmt.Group(int64(o.Rounds))), int64(3*o.Rounds)), int64(3*o.Rounds))
	} else if err := Reach(ctx, env.URL); err != nil {
		return nil, err // unreachable: an error, not a relay without NIP-77
	}
	o.fromEnv(env, "", 0)
	return Negentropy(ctx, env.URL, env.Corpus, env.Live, env.Info, o)
}

func (o *NegentropyOptions) defaults(info *nip11.Info) {
	applyDefaults(o)
	if o.Overlap <= 0 || o.Overlap > 1 {
		o.Overlap = 0.8
	}
	if o.LocalOnly < 0 {
		o.LocalOnly = 0
	}
	switch {
	case o.FrameSize < 0:
		o.FrameSize = 0
	case o.FrameSize == 0 && info != nil && info.Limitation.MaxMessageLength > 0:
		o.FrameSize = max(negentropy.MinFrameSize, (info.Limitation.MaxMessageLength-1024)/2)
	case o.FrameSize == 0:
		o.FrameSize = 65536
	default:
		o.FrameSize = max(negentropy.MinFrameSize, o.FrameSize)
	}
}

// NegentropySkip is the one line saying why a relay skips the negentropy
// workload ("" when it announces NIP-77).
func NegentropySkip(info *nip11.Info) string {
	if info == nil {
		return "skipped: the relay serves no NIP-11 document, so it does not announce NIP-77 (negentropy)"
	}
	if !info.SupportsNIP(77) {
		return fmt.Sprintf("skipped: the relay does not announce NIP-77 (negentropy) in NIP-11 supported_nips %v", info.SupportedNIPs)
	}
	return ""
}

// NegentropyPrior is the one line saying why the relay at url cannot be
// synced against, asked before anything is published: it already holds
// events dated up to now, which the scenarios' filter ({until}) would take
// into the relay's set, so every reconciliation would report ids this run
// never published and convergence could not be verified. "" when it holds
// none, or the question has no answer here: the relay does not announce
// NIP-77 (the workload skips itself), cannot be reached (the run says so)
// or does not answer the REQ (CLOSED, timeout). The probe is a REQ
// {until: now, limit: 1} (the answer capped as every Query's), and, on a
// relay announcing NIP-45, a COUNT of the same filter for the number.
func NegentropyPrior(ctx context.Context, url string, timeout time.Duration) string {
	ictx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	info, _, _ := nip11.Fetch(ictx, url)
	if NegentropySkip(info) != "" {
		return ""
	}
	cn, err := wire.Dial(ictx, url, wire.Options{})
	if err != nil {
		return ""
	}
	defer cn.Close()
	f := nostr.Filter{Until: nostr.Int64(time.Now().Unix())}
	probe := f
	probe.Limit = 1
	qr, _ := cn.Query(ictx, "neg-prior", []nostr.Filter{probe})
	if qr.Received == 0 {
		return ""
	}
	held := "events"
	if info.SupportsNIP(45) {
		if cr, _ := cn.Count(ictx, "neg-prior-count", []nostr.Filter{f}); cr.Ended == wire.EndCount && cr.HasCount && cr.Count > 0 {
			// A COUNT of what it holds now, said as its answer: the
			// number the relay gave, whatever it once accepted.
			held = numfmt.Count(cr.Count, "event") + " dated up to now (by its COUNT answer)"
		}
	}
	if held == "events" {
		held = "events dated up to now"
	}
	return fmt.Sprintf("the relay at %s already holds %s before this run: sync verifies convergence on exactly the events it publishes, so it needs an empty relay", url, held)
}

// Negentropy measures NIP-77 reconciliation of a local set with the
// relay's events, in three scenarios, each its own phase
// ("negentropy/initial", "negentropy/delta", "negentropy/steady"):
//
//   - initial: the local set holds Overlap of the relay's events and
//     LocalOnly×|relay| ids the relay does not have;
//   - delta: Delta fresh events are published first (not timed); the local
//     set is the relay's set before them;
//   - steady: the local set is exactly the relay's (one round trip expected).
//
// relaySet is what the relay holds (the accepted events of the publish
// phase: env.Live). The filter is {until: newest created_at of relaySet}
// so that events other workloads published "now" stay out; delta events
// are made with that created_at. Each scenario runs Rounds reconciliations
// from a fresh session. A reconciliation is accepted when the protocol
// converged; it is then verified: the ids the relay reported having and
// the client lacking must be exactly relay − local, and those only the
// client has exactly local − relay, except for the uncertain ids (see
// verify.Model.Uncertain: the unknown events and the accepted ones they
// would supersede), neither owed nor wrong on either side. Missing and
// extra ids fail the verification (exit 3). The delta events the first delta reconciliation
// found are then fetched by id and each checked (id, signature, one copy).
// A relay that does not announce NIP-77 skips the workload with one note.
func Negentropy(ctx context.Context, url string, c *corpus.Corpus, relaySet []*nostr.Event, info *nip11.Info, o NegentropyOptions) ([]results.Phase, error) {
	if why := NegentropySkip(info); why != "" {
		return []results.Phase{Skipped("negentropy", why)}, nil
	}
	o.defaults(info)
	if len(relaySet) == 0 {
		why := "nothing was published to the relay in this run: its set is unknown, so convergence could not be verified"
		if len(o.Unknown) > 0 {
			why = fmt.Sprintf("no event published in this run was accepted and %d got no decisive answer: the relay's set is unknown, so convergence could not be verified", len(o.Unknown))
		}
		return negUnrun(o, []string{NegInitial, NegDelta, NegSteady}, outcome.NotRun, why), nil
	}
	nr := &negRun{o: o, url: url, user: ctx, cap: info.Limitation.MaxLimit}
	nr.uncertainOf(relaySet, o.Unknown)
	defer nr.closeConns()

	relay := make([]negentropy.Item, 0, len(relaySet)+o.Delta)
	var until int64
	for _, e := range relaySet {
		relay = append(relay, negentropy.Item{CreatedAt: e.CreatedAt, ID: e.ID})
		until = max(until, e.CreatedAt)
	}
	nr.filter = nostr.Filter{Until: nostr.Int64(until)}

	var phases []results.Phase
	done := int64(0)
	progress := func() {
		done++
		if o.Progress != nil {
			o.Progress(done)
		}
	}

	// initial: part of the relay's set plus ids only the client has.
	local, need, have := negInitialSet(relay, o)
	ph, err := nr.scenario(NegInitial, local, need, have, len(relay), nil, progress)
	phases = append(phases, ph)
	if err != nil || ctx.Err() != nil {
		return append(phases, negCut(ctx, o, NegDelta, NegSteady)...), err
	}

	// delta: publish fresh events (not timed), then reconcile the set the
	// relay had before them.
	setup := mono.Now()
	dl, dPub, err := nr.publishDelta(ctx, c, until)
	if err != nil {
		return append(phases, negCut(ctx, o, NegDelta, NegSteady)...), err
	}
	pubSecs := float64(mono.Now()-setup) / 1e9
	after := append(slices.Clip(relay), dPub.items...)
	need = map[string]bool{}
	for _, it := range dPub.items {
		need[it.ID] = true
	}
	ph, err = nr.scenario(NegDelta, relay, need, map[string]bool{}, len(after), &dPub, progress)
	ph.SetupSecs += pubSecs // signing and publishing the delta events: not timed
	ph.Accounts = append(ph.Accounts, dl.Result())
	ph.Counts["delta_sent"] = int64(o.Delta)
	ph.Counts["delta_accepted"] = int64(len(dPub.items))
	if refused := o.Delta - len(dPub.items); refused > 0 {
		ph.Notes = append(ph.Notes, fmt.Sprintf("%d of the %d delta events were not accepted; only the accepted ones are expected", refused, o.Delta))
	}
	phases = append(phases, ph)
	if err != nil || ctx.Err() != nil {
		return append(phases, negCut(ctx, o, NegSteady)...), err
	}

	// steady: identical sets.
	ph, err = nr.scenario(NegSteady, after, map[string]bool{}, map[string]bool{}, len(after), nil, progress)
	phases = append(phases, ph)
	return phases, err
}

// negUnrun is the phases of scenarios none of whose rounds ran: each
// round booked k (NotRun with why, or Cancelled).
func negUnrun(o NegentropyOptions, scenarios []string, k outcome.Kind, why string) []results.Phase {
	var out []results.Phase
	for _, s := range scenarios {
		l := outcome.New(OpReconcile, int64(o.Rounds))
		l.Settle(k, why)
		note := "not run: " + why
		if k == outcome.Cancelled {
			note = "cancelled by the user before the scenario started"
		}
		ph := results.NewPhase("negentropy/"+s, "negentropy")
		ph.Accounts, ph.Notes = []results.Account{l.Result()}, []string{note}
		out = append(out, ph)
	}
	return out
}

// negCut is the phases of the scenarios the user's interrupt kept from
// starting (none when the run was not interrupted: a failed scenario
// ends the workload with its error).
func negCut(ctx context.Context, o NegentropyOptions, scenarios ...string) []results.Phase {
	if ctx.Err() == nil {
		return nil
	}
	return negUnrun(o, scenarios, outcome.Cancelled, "")
}

// negRun is one run of the negentropy workload.
type negRun struct {
	unknown map[string]bool // ids sent without a decisive answer: neither owed nor wrong
	// uncertain: unknown, and the accepted ids an unknown event would
	// supersede: the relay may hold them or not, neither owed nor wrong.
	uncertain map[string]bool
	stored    map[string]bool // unknown ids the relay reported having in this scenario: stored after all
	o         NegentropyOptions
	url       string
	user      context.Context
	filter    nostr.Filter
	set       *connSet // the scenario's connection (nil until dialled)
	cap       int      // the relay's announced max_limit (0: unknown)
}

// uncertainOf sets the run's unknown and uncertain ids from the relay's
// set and the events published without a decisive answer.
func (nr *negRun) uncertainOf(relaySet, unknown []*nostr.Event) {
	nr.unknown, nr.uncertain = map[string]bool{}, map[string]bool{}
	if len(unknown) == 0 {
		return
	}
	m := verify.NewModelUnknown(relaySet, unknown) // an unknown event also accepted is accepted
	for _, e := range m.Unknown {
		nr.unknown[e.ID] = true
	}
	nr.uncertain = m.Uncertain()
}

// negDelta is the delta events the relay accepted.
type negDelta struct {
	items []negentropy.Item
	fresh *Fresh
	index map[string]int
}

// conn returns the connection, dialled on first use and again when the
// relay dropped it (connSet); an error when it is gone.
func (nr *negRun) conn(ctx context.Context) (*wire.Conn, error) {
	if nr.set == nil {
		set, err := dialSet(ctx, nr.url, 1, nr.o.Dial)
		if err != nil {
			return nil, err
		}
		nr.set = set
	}
	if cn := nr.set.get(ctx, 0); cn != nil {
		return cn, nil
	}
	return nil, errors.New(outcome.WhyConnGone)
}

// closeConns closes the connections dialled so far; the next conn dials
// a fresh one.
func (nr *negRun) closeConns() {
	if nr.set != nil {
		nr.set.close()
		nr.set = nil
	}
}

// negInitialSet is the initial scenario's local set and the expected need
// (relay − local) and have (local − relay) sets: Overlap of the relay's
// items chosen with the seed, plus LocalOnly×|relay| random ids with
// created_at values taken from the relay's items.
func negInitialSet(relay []negentropy.Item, o NegentropyOptions) (local []negentropy.Item, need, have map[string]bool) {
	rng := corpus.NewRand(o.Seed, 0x6e6567) // "neg"
	perm := rng.Perm(len(relay))
	keep := int(math.Round(o.Overlap * float64(len(relay))))
	extra := int(math.Round(o.LocalOnly * float64(len(relay))))
	local = make([]negentropy.Item, 0, keep+extra)
	need = make(map[string]bool, len(relay)-keep)
	have = make(map[string]bool, extra)
	for i, j := range perm {
		if i < keep {
			local = append(local, relay[j])
		} else {
			need[relay[j].ID] = true
		}
	}
	var id [32]byte
	for len(have) < extra {
		for k := 0; k < 32; k += 8 {
			v := rng.Uint64()
			for b := 0; b < 8; b++ {
				id[k+b] = byte(v >> (8 * b))
			}
		}
		h := hex.EncodeToString(id[:])
		if have[h] {
			continue
		}
		have[h] = true
		local = append(local, negentropy.Item{CreatedAt: relay[rng.IntN(len(relay))].CreatedAt, ID: h})
	}
	return local, need, have
}

// publishDelta signs and publishes Delta fresh kind-1 events with
// created_at until, one at a time, and returns their account and the
// accepted ones.
func (nr *negRun) publishDelta(ctx context.Context, c *corpus.Corpus, until int64) (*outcome.Ledger, negDelta, error) {
	l := outcome.New(results.OpEvent, int64(nr.o.Delta))
	fresh, err := NewFresh(ctx, c, FreshSpec{Count: nr.o.Delta, Size: 256, Seed: nr.o.Seed, CreatedAt: until}, "")
	if err != nil {
		return l, negDelta{}, err
	}
	d := negDelta{fresh: fresh, index: map[string]int{}}
	fails := 0
	for i, e := range fresh.Events {
		cn, err := nr.conn(ctx)
		if err != nil {
			l.SettleFor(ctx, outcome.WhyConnGone)
			break
		}
		octx, cancel := context.WithTimeout(ctx, nr.o.Timeout)
		ok, err := cn.Publish(octx, e.ID, fresh.Raw[i])
		cancel()
		k, _ := l.Book(ctx, ok, err)
		switch k {
		case outcome.Accepted:
			d.items = append(d.items, negentropy.Item{CreatedAt: e.CreatedAt, ID: e.ID})
			d.index[e.ID] = i
			fails = 0
		case outcome.TimedOut, outcome.ConnLost:
			fails++
			nr.unknown[e.ID], nr.uncertain[e.ID] = true, true
		case outcome.Cancelled:
			// Kind 1: an unknown delta event supersedes nothing, only
			// itself is uncertain.
			nr.unknown[e.ID], nr.uncertain[e.ID] = true, true
		}
		if fails >= 3 || ctx.Err() != nil {
			l.SettleFor(ctx, outcome.WhyAborted)
			break
		}
	}
	return l, d, nil
}

// negStats gathers one scenario's figures.
type negStats struct {
	sync, cpu        *metrics.Histogram
	rtMin, rtMax     int64
	rt, up, down     int64
	need, have       int64
	converged, wrong int64
}

// negScenario is one scenario in progress: what its rounds found.
type negScenario struct {
	nr        *negRun
	name      string
	set       *negentropy.Set
	expNeed   map[string]bool
	expHave   map[string]bool
	ledger    *outcome.Ledger
	wd        *outcome.Watchdog
	st        negStats
	ver       results.Verification
	errs      []string
	firstNeed []string
}

// scenario runs Rounds reconciliations of local against the relay and
// returns the scenario's phase.
func (nr *negRun) scenario(name string, localItems []negentropy.Item, expNeed, expHave map[string]bool, relayN int, delta *negDelta, progress func()) (results.Phase, error) {
	nr.stored = map[string]bool{} // this scenario's
	o := nr.o
	params := map[string]any{"scenario": name, "rounds": o.Rounds, "frame_size": o.FrameSize, "relay_set": relayN,
		"local_set": len(localItems), "expected_need": len(expNeed), "expected_have": len(expHave)}
	if o.FrameSize == 0 { // --frame-size -1: no limit, not a size of 0
		params["frame_size"] = "unlimited"
	}
	if name == NegInitial {
		params["overlap"], params["local_only"] = o.Overlap, o.LocalOnly
	}
	if name == NegDelta {
		params["delta"] = o.Delta
	}
	sc := &negScenario{nr: nr, name: name, expNeed: expNeed, expHave: expHave,
		ledger: outcome.New(OpReconcile, int64(o.Rounds)), ver: results.Verification{Verified: true},
		st: negStats{sync: metrics.NewHistogram(), cpu: metrics.NewHistogram(), rtMin: math.MaxInt64}}
	set, err := negentropy.NewSet(localItems)
	if err != nil {
		ph := results.NewPhase("negentropy/"+name, "negentropy")
		ph.Params = params
		sc.ledger.Settle(outcome.NotRun, err.Error())
		ph.Accounts = []results.Account{sc.ledger.Result()}
		return ph, err
	}
	sc.set = set
	setup := mono.Now()
	// A fresh connection per scenario: the phase's connection counters are
	// its own (the delta events were published on another one).
	nr.closeConns()
	var pctx context.Context
	pctx, sc.wd = outcome.NewWatchdog(nr.user, 3, "reconciliations without an answer (timed out or connection lost)")
	defer sc.wd.Stop()
	if _, err := nr.conn(pctx); err != nil {
		if nr.user.Err() == nil {
			sc.errs = append(sc.errs, "dial: "+err.Error())
		}
		sc.ledger.SettleFor(nr.user, outcome.WhyConnGone) // cancelled when the user stopped the run
	}

	w := o.open(setup)
	for r := 0; r < o.Rounds && pctx.Err() == nil; r++ {
		cn, err := nr.conn(pctx)
		if err != nil {
			sc.errs = verify.AppendUnique(sc.errs, "redial: "+err.Error())
			break
		}
		res, err := negentropy.Sync(pctx, cn, "neg-"+name+"-"+strconv.Itoa(r), nr.filter, set,
			negentropy.Options{FrameSize: o.FrameSize, Timeout: o.Timeout})
		sc.wd.Book(sc.book(res, err))
		progress()
	}
	w.Close(0)
	sc.wd.Settle(sc.ledger, outcome.WhyConnGone)

	ph := w.Phase("negentropy/"+name, "negentropy")
	ph.Params = params
	ph.Counts["client_prep_us"] = set.Prep.Microseconds()
	ph.Accounts = []results.Account{sc.ledger.Result()}
	ph.Aborted = sc.wd.Aborted()
	if delta != nil && sc.firstNeed != nil {
		rv := nr.readBack(pctx, &ph, delta, sc.firstNeed)
		verify.Add(&sc.ver, &rv)
	}
	sc.verification(&ph)
	sc.figures(&ph)
	nr.set.report(nr.user, &ph)
	w.Finish(&ph)
	return ph, nr.user.Err()
}

// book books how one reconciliation ended, and what it found.
func (sc *negScenario) book(res negentropy.Result, err error) outcome.Kind {
	var relayErr *negentropy.RelayError
	var protoErr *negentropy.ProtocolError
	switch {
	case err == nil:
		sc.ledger.Add(outcome.Accepted, "")
		sc.converged(res)
		return outcome.Accepted
	case errors.As(err, &relayErr):
		sc.ledger.Add(outcome.Refused, outcome.RefusalClass(relayErr.Class))
		sc.errs = verify.AppendUnique(sc.errs, "NEG-ERR: "+relayErr.Reason)
		return outcome.Refused
	case errors.As(err, &protoErr):
		// The relay answered, but with what the protocol cannot read: a
		// wrong answer, not credited.
		sc.ledger.Add(outcome.Accepted, "")
		sc.ver.Checked++
		sc.ver.Invalid++
		sc.errs = verify.AppendUnique(sc.errs, protoErr.Error())
		return outcome.Accepted
	case errors.Is(err, negentropy.ErrTimeout):
		sc.ledger.Add(outcome.TimedOut, "")
		return outcome.TimedOut
	}
	return sc.ledger.BookErr(sc.nr.user, err)
}

// converged checks a reconciliation that ended and adds its figures.
func (sc *negScenario) converged(res negentropy.Result) {
	nr, st := sc.nr, &sc.st
	nr.noteStored(res.Need, sc.expNeed)
	// The protocol's CPU was spent whether or not the relay's sets were
	// right: every reconciliation that ended counts.
	st.cpu.Record(max(int64(res.ClientCPU), 1))
	if negCheck(&sc.ver, res, sc.expNeed, sc.expHave, nr.uncertain) {
		st.converged++
		st.sync.Record(res.End - res.Start)
	} else {
		st.wrong++
	}
	st.rt += int64(res.RoundTrips)
	st.rtMin, st.rtMax = min(st.rtMin, int64(res.RoundTrips)), max(st.rtMax, int64(res.RoundTrips))
	st.up += res.BytesUp
	st.down += res.BytesDown
	st.need += int64(len(res.Need))
	st.have += int64(len(res.Have))
	if sc.firstNeed == nil {
		sc.firstNeed = certain(res.Need, nr.uncertain)
	}
}

// verification finishes the scenario's verification, naming what could
// not be known.
func (sc *negScenario) verification(ph *results.Phase) {
	nr, ver := sc.nr, &sc.ver
	ver.Verified = ver.Checked > 0 // nothing converged: nothing to compare
	if n := len(nr.uncertain) - len(nr.unknown); n > 0 {
		ver.Notes = verify.AppendUnique(ver.Notes, fmt.Sprintf("%d accepted events that a newer version whose OK never came would replace (replaceable or addressable) may or may not be on the relay: neither required nor counted wrong", n))
	}
	if n := len(nr.stored); n > 0 {
		ver.StoredUnknown = int64(n)
		ver.Notes = verify.AppendUnique(ver.Notes, fmt.Sprintf("%d events whose OK never came (timed out, connection lost or cancelled) were stored after all: the relay reported having them; neither required nor counted wrong", n))
	}
	verify.Finish(ver)
	ph.Verification = ver
}

// figures puts the scenario's counters, latency, rate, errors and notes
// into ph.
func (sc *negScenario) figures(ph *results.Phase) {
	st, c := &sc.st, ph.Counts
	c["reconciliations"] = sc.ledger.Count(outcome.Accepted) - st.wrong
	c["round_trips"], c["bytes_up"], c["bytes_down"] = st.rt, st.up, st.down
	c["need_ids"], c["have_ids"] = st.need, st.have
	if st.rtMax > 0 {
		c["round_trips_min"], c["round_trips_max"] = st.rtMin, st.rtMax
	}
	if n := sc.ledger.Count(outcome.Accepted); n > 0 {
		c["bytes_up_per_sync"], c["bytes_down_per_sync"] = st.up/n, st.down/n
	}
	if st.cpu.Count() > 0 {
		// The protocol's own CPU per sync (a count, not a latency: reports
		// chart "sync").
		c["client_cpu_us_p50"], c["client_cpu_us_max"] = st.cpu.Quantile(50)/1000, st.cpu.Max()/1000
	}
	if st.converged > 0 {
		ph.Latency["sync"] = st.sync.Result()
		if ph.Duration > 0 {
			ph.Rates = map[string]float64{results.RateSyncs: results.PerSecond(st.converged, ph.Duration)}
		}
	}
	if st.wrong > 0 {
		sc.errs = verify.AppendUnique(sc.errs, fmt.Sprintf("%d reconciliations did not converge on the right sets", st.wrong))
	}
	ph.Errors = append(ph.Errors, sc.errs...)
	ph.Notes = append(ph.Notes, fmt.Sprintf("client CPU of the reconciliation itself (go-nostr nip77/negentropy, hex included): %s; building the sorted local set of %s took %s (not timed)",
		negCPU(st.cpu), numfmt.Count(sc.set.Len(), "item"), numfmt.Dur(sc.set.Prep)))
}

// negCPU is the protocol's client CPU per reconciliation that ended, or
// why there is none.
func negCPU(h *metrics.Histogram) string {
	if h.Count() == 0 {
		return "n/a (no reconciliation ended: none to measure)"
	}
	return fmt.Sprintf("p50 %s, max %s per sync", numfmt.Dur(time.Duration(h.Quantile(50))), numfmt.Dur(time.Duration(h.Max())))
}

// noteStored notes the events of need (ids the relay has, the client
// lacks) sent without a decisive answer and not expected: the relay stored
// them after all, which is neither required nor wrong.
func (nr *negRun) noteStored(need []string, exp map[string]bool) {
	for _, id := range need {
		if nr.unknown[id] && !exp[id] {
			nr.stored[id] = true
		}
	}
}

// certain is ids without the uncertain ones.
func certain(ids []string, uncertain map[string]bool) []string {
	if len(uncertain) == 0 {
		return ids
	}
	out := ids[:0:0]
	for _, id := range ids {
		if !uncertain[id] {
			out = append(out, id)
		}
	}
	return out
}

// negCheck verifies one converged reconciliation: need must be exactly
// expNeed and have exactly expHave, except for the uncertain ids (the
// relay may hold them or not): on either side, and expected or not, they
// are neither missing nor extra. It returns true when they are.
func negCheck(v *results.Verification, res negentropy.Result, expNeed, expHave, uncertain map[string]bool) bool {
	v.Checked++
	ok := true
	cmp := func(got []string, exp map[string]bool) {
		seen := make(map[string]bool, len(got))
		for _, id := range got {
			v.Returned++
			switch {
			case seen[id]:
				v.Duplicated++
				ok = false
			case !exp[id] && !uncertain[id]:
				v.Extra++
				ok = false
			}
			seen[id] = true
		}
		for id := range exp {
			if uncertain[id] {
				continue
			}
			v.Expected++
			if !seen[id] {
				v.Missing++
				ok = false
			}
		}
	}
	cmp(res.Need, expNeed)
	cmp(res.Have, expHave)
	return ok
}

// readBack fetches the events the first delta reconciliation said the
// client needs, by id, and checks each (valid, one copy, one of the delta
// events): the sync's result is usable. Not timed.
func (nr *negRun) readBack(ctx context.Context, ph *results.Phase, d *negDelta, ids []string) results.Verification {
	chunk := 500
	if nr.cap > 0 {
		chunk = min(chunk, nr.cap)
	}
	reqs := (len(ids) + chunk - 1) / chunk
	l := outcome.New(results.OpRead, int64(reqs))
	rv := results.Verification{Verified: true, Expected: int64(len(ids))}
	got := map[string]bool{}
	checker := verify.NewChecker()
	returned := int64(0)
	for q := 0; q < reqs; q++ {
		cn, err := nr.conn(ctx)
		if err != nil {
			break
		}
		part := ids[q*chunk : min(len(ids), (q+1)*chunk)]
		f := nostr.Filter{IDs: part, Limit: len(part)}
		qctx, cancel := context.WithTimeout(ctx, nr.o.Timeout)
		qr, err := cn.Query(qctx, "neg-read-"+strconv.Itoa(q), []nostr.Filter{f})
		cancel()
		returned += int64(len(qr.Events))
		switch {
		case qr.Ended == wire.EndEOSE:
			l.Add(outcome.Accepted, "")
			rv.Checked++
			checkRead(&rv, checker.NewStream(&f), d, qr.Events, got)
		case qr.Ended == wire.EndClosed:
			l.Add(outcome.Refused, outcome.RefusalClass(qr.Class))
			ph.Errors = verify.AppendUnique(ph.Errors, "read-back of the needed events closed: "+qr.Reason)
		default:
			l.BookErr(nr.user, err)
		}
	}
	l.SettleFor(nr.user, outcome.WhyConnGone)
	for _, id := range ids {
		if !got[id] {
			rv.Missing++
		}
	}
	ph.Counts["read_back_events"] = int64(len(got))
	ph.Accounts = append(ph.Accounts, l.Result())
	g := rv
	verify.Finish(&g)
	ph.Groups = append(ph.Groups, results.Group{Name: "read-back of needed events", Counts: map[string]int64{"requested": int64(len(ids)), "returned": returned}, Verification: &g})
	return rv
}

// checkRead checks the events of one read-back answer.
func checkRead(rv *results.Verification, stream *verify.Stream, d *negDelta, evs [][]byte, got map[string]bool) {
	for _, raw := range evs {
		var known *nostr.Event
		var pub []byte
		if id := EventIDOf(raw); id != nil {
			if i, ok := d.index[string(id)]; ok {
				known, pub = d.fresh.Events[i], d.fresh.Raw[i]
			}
		}
		e, fault := stream.Event(raw, known, pub)
		verify.Book(rv, fault)
		if fault != verify.Valid {
			continue
		}
		if _, ours := d.index[e.ID]; !ours {
			rv.Extra++ // valid, but not a delta event: the relay named an id it should not have
		}
		got[e.ID] = true
	}
}

// Check checks the options as the CLI's flags set them (Checked), the
// flags named with in's prefix.
func (o NegentropyOptions) Check(r *flagcheck.Ranges, in CheckInput) {
	p := in.Prefix
	r.Min(p+"rounds", o.Rounds, 1)
	if !(o.Overlap > 0 && o.Overlap <= 1) {
		r.Bad(p+"overlap", o.Overlap, "must be above 0 and at most 1")
	}
	if !(o.LocalOnly >= 0 && o.LocalOnly <= 1) {
		r.Bad(p+"local-only", o.LocalOnly, "must be between 0 and 1")
	}
	r.Min(p+"delta", o.Delta, 1)
	r.Positive(p+"timeout", o.Timeout)
	if o.FrameSize != -1 && o.FrameSize != 0 && o.FrameSize < 4096 {
		r.Bad(p+"frame-size", o.FrameSize, "must be 0 (from NIP-11), -1 (unlimited) or at least 4096")
	}
	r.Memory(p+"rounds", o.Rounds, 3*float64(o.Rounds), flagcheck.RecordBytes, "reconciliation (3 scenarios a round)")
	r.Memory(p+"delta", o.Delta, float64(o.Delta), flagcheck.FreshEventBytes(256), "fresh event")
}
