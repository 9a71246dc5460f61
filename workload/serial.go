package workload

import (
	"context"
	"fmt"

	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/wire"
)

// serialPhase declares a phase whose requests go one at a time on one
// connection, each drawn before the clock and judged after it (COUNT,
// search), to the engine that runs it (runSerial): the workload gives its
// own step and judges the answers; the engine does the rest.
type serialPhase struct {
	name   string // the phase's name and operation
	silent string // why the watchdog stops the phase: 3 requests in a row ended without an answer
	// op is the operation of the phase's requests; results.OpQuery's are
	// REQs, booked by the REQ booker (serialRun.query) in the phase's
	// account and series.
	op        string
	requested int    // requests asked for
	drawn     int    // requests drawn before the clock
	undrawn   string // why the others are not run
	// compare: besides op's requests, REQs in an account of their own (and
	// a series of their own, not reported).
	compare  bool
	whole    bool     // keep complete REQ answers whole (queryRecord.hold)
	counters []string // the counters the phase shows, 0 or not
	params   map[string]any
	// step sends request i (of drawn) on cn and books how it ended.
	step func(ctx context.Context, s *serialRun, cn *wire.Conn, i int)
}

// serialEnv fills, from env, what the options of a serial workload of n
// requests leave unset: b's seed, sampler and progress reporter (doing,
// e.g. "Counting (NIP-45)", on env's relay: "Ran 10 of 100 <many>"), and
// relayCap, the relay's announced max_limit.
func serialEnv(b *Base, relayCap *int, env Env, doing, one, many string, n int) {
	b.fromEnv(env, progress.Counting(fmt.Sprintf("%s on %s", doing, env.URL), "Ran", one, many, int64(n)), int64(n))
	if *relayCap == 0 {
		*relayCap = env.relayCap()
	}
}

// serialRun is a serial phase in progress.
type serialRun struct {
	// q is the connection set with its redial, the watchdog, and the REQ
	// booker with its account and series (the phase's when its requests
	// are REQs).
	q      *queryRun
	led    *outcome.Ledger // the phase's account, first of its Accounts
	series *metrics.Series // the phase's series
}

// runSerial runs p against url: it dials one connection (b's Dial), opens
// the timed window, hands each drawn request to p.step on the connection
// (redialled when lost) until the phase stops, reports progress, closes
// the window, settles the accounts and returns the phase's frame, for the
// workload to judge the answers into.
func runSerial(ctx context.Context, url string, b Base, p serialPhase) (results.Phase, error) {
	q, pctx, err := dialQueries(ctx, url, 1, b, p.silent)
	if err != nil {
		return results.Phase{}, err
	}
	defer q.close()
	s := &serialRun{q: q, led: p.ledger(p.op)}
	q.whole = p.whole
	if p.op == results.OpQuery {
		q.led = s.led
	} else if p.compare {
		q.led = p.ledger(results.OpQuery)
	}

	w := b.open(q.setup)
	s.series = metrics.NewSeries(w.Start)
	q.series = s.series
	if q.led != s.led {
		q.series = metrics.NewSeries(w.Start)
	}
	for i := range p.drawn {
		if pctx.Err() != nil {
			break
		}
		cn := q.set.get(pctx, 0)
		if cn == nil {
			break
		}
		p.step(pctx, s, cn, i)
		if (i+1)%10 == 0 {
			b.progress(int64(i + 1))
		}
	}
	w.Close(0)
	b.progress(int64(p.drawn))
	return s.phase(w, p), nil
}

// ledger is an account of p's requested operations of kind op, those not
// drawn not run.
func (p serialPhase) ledger(op string) *outcome.Ledger {
	led := outcome.New(op, int64(p.requested))
	led.AddN(outcome.NotRun, p.undrawn, int64(p.requested-p.drawn))
	return led
}

// phase settles the accounts (what did not end is not run: the connection
// went, or the phase stopped) and builds the phase's frame (queryRun.frame)
// with p's counters and parameters, the comparison REQs' account after the
// phase's, and the relay's resources over the window.
func (s *serialRun) phase(w *Window, p serialPhase) results.Phase {
	reqs := s.q.led
	if reqs == s.led {
		reqs = nil
	}
	s.q.wd.Settle(s.led, outcome.WhyConnGone)
	if reqs != nil {
		s.q.wd.Settle(reqs, outcome.WhyConnGone)
	}
	ph := s.q.frame(w, p.name, p.name, s.series, s.led, p.counters...)
	ph.Params = p.params
	if reqs != nil {
		ph.Accounts = append(ph.Accounts, reqs.Result())
	}
	w.Finish(&ph)
	return ph
}

// query sends r's REQ on cn under id, waits for its end at most the
// timeout, and books how it ended (the REQ booker) in the REQs' account,
// series and watchdog.
func (s *serialRun) query(ctx context.Context, cn *wire.Conn, id string, r *queryRecord) {
	qctx, cancel := context.WithTimeout(ctx, s.q.o.Timeout)
	qr, err := cn.Query(qctx, id, r.req())
	cancel()
	s.q.wd.Book(s.q.book(r, qr, err))
}
