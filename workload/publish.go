// Package workload runs the timed phases of a benchmark against one relay and
// returns them in the results-file form: publish (closed loop or pipelined),
// query by filter shape with verification, and the live and load workloads.
//
// Every workload gets its events from a pre-signed corpus: nothing is signed
// or generated inside a timed window.
package workload

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/wire"
)

// Publish modes.
const (
	ModeWait     = "wait"     // one EVENT in flight per connection: send, wait for its OK, send the next
	ModePipeline = "pipeline" // up to Window unacknowledged EVENTs per connection; every OK still read and matched
)

// PublishOptions configure the publish phase.
type PublishOptions struct {
	Connections int           // concurrent connections (-concurrency)
	Mode        string        // ModeWait or ModePipeline
	Window      int           // pipelined: max unacknowledged EVENTs per connection
	Timeout     time.Duration // how long an EVENT may wait for its OK
	Dial        wire.Options
	Progress    func(done int64)
}

func (o *PublishOptions) defaults() error {
	if o.Connections <= 0 {
		o.Connections = 10
	}
	if o.Mode == "" {
		o.Mode = ModeWait
	}
	if o.Mode != ModeWait && o.Mode != ModePipeline {
		return fmt.Errorf("publish mode %q: want %q or %q", o.Mode, ModeWait, ModePipeline)
	}
	if o.Window <= 0 {
		o.Window = 64
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	return nil
}

// Outcome of one event.
type Outcome uint8

// Outcomes of a published event.
const (
	NotSent Outcome = iota
	Accepted
	Refused
	Duplicate // refused with "duplicate:": the relay says it already holds the event
	TimedOut
	Failed // connection lost or write error before an OK
)

// PublishResult is what the relay said about each event, for the phases that
// verify against it.
type PublishResult struct {
	Phase    results.Phase
	Outcomes []Outcome // by corpus index; NotSent for events not in this phase
	Reasons  map[int]string
}

// AcceptedIndexes returns the corpus indexes of accepted events.
func (p *PublishResult) AcceptedIndexes() []int {
	var out []int
	for i, o := range p.Outcomes {
		if o == Accepted {
			out = append(out, i)
		}
	}
	return out
}

// StoredIndexes returns the corpus indexes of events the relay should now
// hold: those it accepted and those it refused as "duplicate:" (it says it
// already has them, e.g. from an earlier run against the same relay).
func (p *PublishResult) StoredIndexes() []int {
	var out []int
	for i, o := range p.Outcomes {
		if o == Accepted || o == Duplicate {
			out = append(out, i)
		}
	}
	return out
}

type pubWorker struct {
	hist     *metrics.Histogram
	sent     int64
	bytes    int64
	accepted int64
	refused  map[string]int64
	timedOut int64
	failed   int64
	errs     []string
}

// Publish sends the corpus events at indexes to url and waits for every OK.
// The timed window starts when the first EVENT is written and ends when the
// last OK (or timeout) is in; dialing is not timed.
func Publish(ctx context.Context, url string, c *corpus.Corpus, indexes []int, o PublishOptions) (*PublishResult, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	conns, err := wire.DialPool(ctx, url, o.Connections, o.Dial)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, cn := range conns {
			cn.Close()
		}
	}()

	res := &PublishResult{Outcomes: make([]Outcome, len(c.Events)), Reasons: map[int]string{}}
	var reasonsMu sync.Mutex
	setOutcome := func(idx int, oc Outcome, reason string) {
		res.Outcomes[idx] = oc // each index is owned by exactly one sender
		if reason != "" {
			reasonsMu.Lock()
			res.Reasons[idx] = reason
			reasonsMu.Unlock()
		}
	}

	var next, done atomic.Int64
	workers := make([]*pubWorker, len(conns))
	cpu0 := CPUTime()
	start := mono.Now()
	series := metrics.NewSeries(start)
	var wg sync.WaitGroup
	for w := range conns {
		pw := &pubWorker{hist: metrics.NewHistogram(), refused: map[string]int64{}}
		workers[w] = pw
		wg.Add(1)
		go func(cn *wire.Conn) {
			defer wg.Done()
			if o.Mode == ModeWait {
				publishWait(ctx, cn, c, indexes, &next, &done, pw, series, setOutcome, o)
			} else {
				publishPipelined(ctx, cn, c, indexes, &next, &done, pw, series, setOutcome, o)
			}
		}(conns[w])
	}
	stopProgress := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if o.Progress != nil {
					o.Progress(done.Load())
				}
			case <-stopProgress:
				if o.Progress != nil {
					o.Progress(done.Load())
				}
				return
			}
		}
	}()
	wg.Wait()
	end := mono.Now()
	cpu := CPUTime() - cpu0
	close(stopProgress)
	<-progressDone

	ph := results.Phase{
		Name:     "publish",
		Workload: "publish",
		Params: map[string]any{
			"mode": o.Mode, "connections": o.Connections, "window": o.Window,
			"timeout": o.Timeout.String(), "events": len(indexes),
		},
		Start:    mono.Time(start),
		Duration: end - start,
		Counts:   map[string]int64{"sent": 0, "accepted": 0, "refused": 0, "timed_out": 0, "failed": 0},
		Refused:  map[string]int64{},
		Latency:  map[string]*results.Histogram{},
	}
	hist := mergePublishers(&ph, workers, len(indexes))
	var accBytes int64
	for _, idx := range indexes {
		if res.Outcomes[idx] == Accepted {
			accBytes += int64(len(c.Raw[idx]))
		}
	}
	ph.Counts["bytes_accepted"] = accBytes
	ph.Notes = append(ph.Notes, reasonSamples(res.Reasons, res.Outcomes)...)
	addConnStats(&ph, conns)
	ph.Latency["ok"] = hist.Result()
	secs := float64(ph.Duration) / 1e9
	ph.Rates = map[string]float64{}
	if secs > 0 {
		ph.Rates["events_per_sec"] = float64(ph.Counts["accepted"]) / secs
		ph.Rates["sent_per_sec"] = float64(ph.Counts["sent"]) / secs
		ph.Rates["mb_per_sec"] = float64(ph.Counts["bytes_sent"]) / secs / 1e6
	}
	ph.Series = series.Result(end)
	ph.Resources = &results.Resources{ClientCPUSecs: cpu.Seconds()}
	if o.Mode == ModeWait {
		ph.Notes = append(ph.Notes, fmt.Sprintf("closed loop: %d connections, one EVENT in flight each; OK latency is EVENT write → OK read", o.Connections))
	} else {
		ph.Notes = append(ph.Notes, fmt.Sprintf("pipelined: up to %d unacknowledged EVENTs per connection; OK latency is EVENT write → OK read, so it includes the relay's queue", o.Window))
	}
	if n := ph.Counts["accepted"]; n < ph.Counts["sent"] {
		ph.Notes = append(ph.Notes, fmt.Sprintf("%d of %d events sent were not accepted", ph.Counts["sent"]-n, ph.Counts["sent"]))
	}
	res.Phase = ph
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, nil
}

func publishWait(ctx context.Context, cn *wire.Conn, c *corpus.Corpus, indexes []int, next, done *atomic.Int64,
	pw *pubWorker, series *metrics.Series, set func(int, Outcome, string), o PublishOptions) {
	for ctx.Err() == nil {
		k := next.Add(1) - 1
		if k >= int64(len(indexes)) {
			return
		}
		idx := indexes[k]
		ev := c.Events[idx]
		raw := c.Raw[idx]
		octx, cancel := context.WithTimeout(ctx, o.Timeout)
		ok, err := cn.Publish(octx, ev.ID, raw)
		cancel()
		pw.sent++
		pw.bytes += int64(len(raw))
		record(ok, err, idx, pw, series, set)
		done.Add(1)
		if err != nil && cn.Err() != nil {
			// The connection is gone: every remaining event of this worker
			// would fail the same way; leave them to the other connections.
			pw.errs = append(pw.errs, "connection lost: "+cn.Err().Error())
			return
		}
	}
}

func publishPipelined(ctx context.Context, cn *wire.Conn, c *corpus.Corpus, indexes []int, next, done *atomic.Int64,
	pw *pubWorker, series *metrics.Series, set func(int, Outcome, string), o PublishOptions) {
	slots := make(chan struct{}, o.Window)
	var mu sync.Mutex // guards pw and the histogram: done runs on the reader goroutine
	var inflight sync.WaitGroup
	timeoutNs := int64(o.Timeout)
	stopSweep := make(chan struct{})
	sweepDone := make(chan struct{})
	go func() { // expire EVENTs whose OK is overdue
		defer close(sweepDone)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				cn.ExpireBefore(mono.Now() - timeoutNs)
			case <-stopSweep:
				return
			}
		}
	}()
	defer func() { close(stopSweep); <-sweepDone }()

	for ctx.Err() == nil {
		k := next.Add(1) - 1
		if k >= int64(len(indexes)) {
			break
		}
		idx := indexes[k]
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		case <-cn.Done():
		}
		if ctx.Err() != nil || cn.Err() != nil {
			if cn.Err() != nil {
				mu.Lock()
				pw.errs = append(pw.errs, "connection lost: "+cn.Err().Error())
				mu.Unlock()
			}
			set(idx, NotSent, "")
			break
		}
		raw := c.Raw[idx]
		inflight.Add(1)
		err := cn.SendEvent(c.Events[idx].ID, raw, func(ok wire.OK) {
			mu.Lock()
			record(ok, ok.Err, idx, pw, series, set)
			mu.Unlock()
			done.Add(1)
			<-slots
			inflight.Done()
		})
		mu.Lock()
		pw.sent++
		pw.bytes += int64(len(raw))
		mu.Unlock()
		if err != nil {
			mu.Lock()
			pw.failed++
			set(idx, Failed, err.Error())
			pw.errs = append(pw.errs, "send: "+err.Error())
			mu.Unlock()
			done.Add(1)
			<-slots
			inflight.Done()
			if cn.Err() != nil {
				break
			}
		}
	}
	// Wait for the OKs still in flight; the sweeper expires overdue ones and a
	// dead connection fails them, so this wait is bounded.
	waitDone := make(chan struct{})
	go func() { inflight.Wait(); close(waitDone) }()
	select {
	case <-waitDone:
	case <-time.After(o.Timeout + 5*time.Second):
		mu.Lock()
		pw.errs = append(pw.errs, "gave up waiting for OKs still in flight")
		mu.Unlock()
	}
}

// mergePublishers adds the publishers' tallies to ph (sent, accepted,
// refused by class, timed out, failed, not sent of events, bytes, errors) and
// returns their merged OK latency histogram.
func mergePublishers(ph *results.Phase, workers []*pubWorker, events int) *metrics.Histogram {
	hist := metrics.NewHistogram()
	for _, pw := range workers {
		hist.Merge(pw.hist)
		ph.Counts["sent"] += pw.sent
		ph.Counts["bytes_sent"] += pw.bytes
		ph.Counts["accepted"] += pw.accepted
		ph.Counts["timed_out"] += pw.timedOut
		ph.Counts["failed"] += pw.failed
		for k, v := range pw.refused {
			ph.Refused[k] += v
			ph.Counts["refused"] += v
		}
		ph.Errors = appendUnique(ph.Errors, pw.errs...)
	}
	ph.Counts["not_sent"] = int64(events) - ph.Counts["sent"]
	return hist
}

// record books one OK (or its failure) for event idx.
func record(ok wire.OK, err error, idx int, pw *pubWorker, series *metrics.Series, set func(int, Outcome, string)) {
	now := mono.Now()
	switch {
	case err != nil:
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, wire.ErrTimeout) {
			pw.timedOut++
			set(idx, TimedOut, "timeout")
			series.Add(now, "timed_out", 1)
		} else {
			pw.failed++
			set(idx, Failed, err.Error())
			series.Add(now, "failed", 1)
		}
	case ok.Accepted:
		pw.accepted++
		lat := ok.Recv - ok.Sent
		pw.hist.Record(lat)
		series.Add(now, "accepted", 1)
		series.Latency(now, lat)
		set(idx, Accepted, "")
	default:
		cls := string(ok.Class)
		pw.refused[cls]++
		pw.hist.Record(ok.Recv - ok.Sent)
		series.Add(now, "refused", 1)
		if ok.Class == wire.ClassDuplicate {
			set(idx, Duplicate, ok.Reason)
		} else {
			set(idx, Refused, ok.Reason)
		}
	}
}

func addConnStats(ph *results.Phase, conns []*wire.Conn) {
	var notices []string
	for _, cn := range conns {
		st := cn.Stats()
		ph.Counts["malformed_frames"] += st.Malformed
		ph.Counts["unmatched_oks"] += st.UnmatchedOK
		ph.Counts["notices"] += st.Notices
		ph.Counts["bytes_received"] += st.BytesIn
		notices = appendUnique(notices, cn.Notices()...)
	}
	for _, n := range notices {
		if len(ph.Notes) > 20 {
			break
		}
		ph.Notes = append(ph.Notes, "relay NOTICE: "+n)
	}
	if ph.Counts["malformed_frames"] > 0 {
		ph.Errors = append(ph.Errors, fmt.Sprintf("relay sent %d malformed frames", ph.Counts["malformed_frames"]))
	}
	if ph.Counts["unmatched_oks"] > 0 {
		ph.Errors = append(ph.Errors, fmt.Sprintf("relay sent %d OKs for events not in flight (not credited)", ph.Counts["unmatched_oks"]))
	}
}

func appendUnique(dst []string, src ...string) []string {
	for _, s := range src {
		found := false
		for _, d := range dst {
			if d == s {
				found = true
				break
			}
		}
		if !found && len(dst) < 50 {
			dst = append(dst, s)
		}
	}
	return dst
}

// reasonSamples lists the distinct refusal and failure reasons with how often
// each occurred, most frequent first, so a reader sees what the relay said.
func reasonSamples(reasons map[int]string, outcomes []Outcome) []string {
	type rc struct {
		label string
		n     int
	}
	counts := map[string]int{}
	for idx, r := range reasons {
		label := "refused"
		switch outcomes[idx] {
		case TimedOut:
			label = "timed out"
		case Failed:
			label = "failed"
		}
		counts[label+": "+r]++
	}
	list := make([]rc, 0, len(counts))
	for k, v := range counts {
		list = append(list, rc{k, v})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].n != list[j].n {
			return list[i].n > list[j].n
		}
		return list[i].label < list[j].label
	})
	var out []string
	for i, r := range list {
		if i == 10 {
			out = append(out, fmt.Sprintf("… and %d other reasons", len(list)-10))
			break
		}
		out = append(out, fmt.Sprintf("%s (%d×)", r.label, r.n))
	}
	return out
}
