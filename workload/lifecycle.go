package workload

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/wire"
)

// Lifecycle stages, in the order an event goes through them.
const (
	StageOK          = "ok"              // EVENT write → OK read
	StageDeliver     = "deliver"         // EVENT write → delivery on a live subscription
	StageReadOwn     = "read_your_write" // EVENT write → first answer to a REQ by id that holds the event
	StageReadAfterOK = "read_after_ok"   // OK read → that same answer
)

// LifecycleOptions configure the event lifecycle timing (the reference
// suite's -timing, -timing-events, -timing-subs).
type LifecycleOptions struct {
	Events  int           // sampled events, sent one at a time (default 100)
	Size    int           // content bytes (default 1024)
	Timeout time.Duration // wait for an OK and for a delivery (default 5 s)
	// ReadTimeout bounds the read-your-write retries after the OK
	// (default 2 s): an event not found by then is "never within" it.
	ReadTimeout time.Duration
	Seed        int64
	Dial        wire.Options
	Progress    func(done int64)
}

// lifeRecord is one sampled event's stage times (mono ns; 0: not reached).
type lifeRecord struct {
	sent, ok, deliver, found int64
	accepted                 bool
	attempts                 int
	reason                   string
}

// Lifecycle sends fresh events one at a time and times, for each, the
// EVENT→OK round trip, the delivery to a live subscription held on another
// connection, and the first appearance in a REQ by id issued right after
// the OK (retried with bounded backoff). Every stage is a measured time on
// one monotonic clock, none is derived from another.
func Lifecycle(ctx context.Context, url string, c *corpus.Corpus, o LifecycleOptions) (results.Phase, error) {
	ph := results.Phase{Name: "lifecycle", Workload: "lifecycle"}
	if o.Events <= 0 {
		o.Events = 100
	}
	if o.Size <= 0 {
		o.Size = 1024
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 2 * time.Second
	}
	nonce := RunNonce()
	ch := ChannelNames(o.Seed, nonce, 1)
	fresh, err := NewFresh(ctx, c, FreshSpec{Count: o.Events, Size: o.Size, Seed: o.Seed, Channels: ch}, nonce)
	if err != nil {
		return ph, err
	}
	conns, err := wire.DialPool(ctx, url, 3, o.Dial)
	if err != nil {
		return ph, err
	}
	defer closeAll(conns)
	pub, subc, qc := conns[0], conns[1], conns[2]

	recs := make([]lifeRecord, o.Events)
	var mu sync.Mutex
	delivered := make(chan int, o.Events*2)
	eose := make(chan struct{})
	var eoseOnce sync.Once
	var dups, foreign int64
	_, err = subc.Req("life", []nostr.Filter{{Tags: map[string][]string{"t": ch}, Since: nostr.Int64(fresh.Events[0].CreatedAt)}}, wire.SubHandler{
		OnEvent: func(raw []byte, recv int64) {
			n, ok := fresh.Index(raw)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case !ok:
				foreign++
			case recs[n].deliver != 0:
				dups++
			default:
				recs[n].deliver = recv
				delivered <- n
			}
		},
		OnEOSE: func(int64) { eoseOnce.Do(func() { close(eose) }) },
	})
	if err != nil {
		return ph, fmt.Errorf("live subscription: %w", err)
	}
	select {
	case <-eose:
	case <-time.After(o.Timeout):
		return ph, fmt.Errorf("live subscription: no EOSE within %v", o.Timeout)
	case <-ctx.Done():
		return ph, ctx.Err()
	}

	cpu0 := CPUTime()
	start := mono.Now()
	series := metrics.NewSeries(start)
	var queries, sampled int
	for i := 0; i < o.Events && ctx.Err() == nil; i++ {
		ev := fresh.Events[i]
		octx, cancel := context.WithTimeout(ctx, o.Timeout)
		ok, perr := pub.Publish(octx, ev.ID, fresh.Raw[i])
		cancel()
		sampled++
		mu.Lock()
		r := &recs[i]
		r.sent = ok.Sent
		if perr == nil {
			r.ok = ok.Recv
			r.accepted = ok.Accepted
			if !ok.Accepted {
				r.reason = "refused: " + ok.Reason
			}
		} else {
			r.reason = perr.Error()
		}
		mu.Unlock()
		if perr == nil && ok.Accepted {
			series.Add(ok.Recv, "accepted", 1)
			series.Latency(ok.Recv, ok.Recv-ok.Sent)
			// Read your write: REQ by id right after the OK, retried.
			deadline := ok.Recv + int64(o.ReadTimeout)
			backoff := time.Millisecond
			for attempt := 1; ctx.Err() == nil; attempt++ {
				qctx, cancel := context.WithTimeout(ctx, o.Timeout)
				qr, _ := qc.Query(qctx, "rw-"+strconv.Itoa(i)+"-"+strconv.Itoa(attempt), []nostr.Filter{{IDs: []string{ev.ID}}})
				cancel()
				queries++
				found := false
				for _, raw := range qr.Events {
					if id := EventIDOf(raw); string(id) == ev.ID {
						found = true
					}
				}
				if found {
					mu.Lock()
					r.found = qr.FirstEvent
					r.attempts = attempt
					mu.Unlock()
					break
				}
				if qc.Err() != nil || mono.Now()+int64(backoff) > deadline {
					mu.Lock()
					r.attempts = attempt
					mu.Unlock()
					break
				}
				time.Sleep(backoff)
				backoff = min(2*backoff, 50*time.Millisecond)
			}
			// Wait for the live delivery before the next event, so that the
			// stages of two events never overlap.
			mu.Lock()
			got := r.deliver != 0
			mu.Unlock()
			if !got {
				wait := time.Duration(max(0, r.sent+int64(o.Timeout)-mono.Now()))
				tm := time.NewTimer(wait)
			waitLoop:
				for {
					select {
					case n := <-delivered:
						if n == i {
							break waitLoop
						}
					case <-tm.C:
						break waitLoop
					case <-ctx.Done():
						break waitLoop
					}
				}
				tm.Stop()
			}
		}
		if o.Progress != nil {
			o.Progress(int64(i + 1))
		}
	}
	end := mono.Now()
	cpu := CPUTime() - cpu0

	mu.Lock()
	defer mu.Unlock()
	hists := map[string]*metrics.Histogram{}
	for _, s := range []string{StageOK, StageDeliver, StageReadOwn, StageReadAfterOK} {
		hists[s] = metrics.NewHistogram()
	}
	counts := map[string]int64{"sampled": int64(sampled)}
	var reasons []string
	var deliveredBeforeOK int64
	for i := 0; i < sampled; i++ {
		r := recs[i]
		if r.ok != 0 {
			hists[StageOK].Record(r.ok - r.sent)
		}
		if !r.accepted {
			counts["not_accepted"]++
			reasons = verify.AppendUnique(reasons, r.reason)
			continue
		}
		counts["accepted"]++
		if r.deliver != 0 {
			hists[StageDeliver].Record(r.deliver - r.sent)
			counts["delivered"]++
			if r.deliver < r.ok {
				deliveredBeforeOK++
			}
		} else {
			counts["never_delivered"]++
		}
		if r.found != 0 {
			hists[StageReadOwn].Record(r.found - r.sent)
			hists[StageReadAfterOK].Record(max(1, r.found-r.ok))
			counts["found"]++
			if r.attempts > 1 {
				counts["found_after_retry"]++
			}
		} else {
			counts["never_found"]++
		}
	}
	counts["delivered_before_ok"] = deliveredBeforeOK
	counts["queries"] = int64(queries)
	counts["duplicated"] = dups
	counts["foreign"] = foreign
	counts["sent"] = int64(sampled)
	ph.Params = map[string]any{"events": o.Events, "size": o.Size, "timeout": o.Timeout.String(), "read_timeout": o.ReadTimeout.String()}
	ph.Start = mono.Time(start)
	ph.Duration = end - start
	ph.Counts = counts
	ph.Latency = map[string]*results.Histogram{}
	ph.Series = series.Result(end)
	slowest, slowestP := "", int64(-1)
	for _, s := range []string{StageOK, StageDeliver, StageReadOwn, StageReadAfterOK} {
		h := hists[s]
		ph.Latency[s] = h.Result()
		g := results.Group{Name: s, Counts: map[string]int64{"events": h.Count()}, Latency: map[string]*results.Histogram{"latency": ph.Latency[s]}}
		ph.Groups = append(ph.Groups, g)
		if s != StageReadOwn && h.Count() > 0 && h.Quantile(50) > slowestP {
			slowest, slowestP = s, h.Quantile(50)
		}
	}
	addConnStats(ctx, &ph, conns)
	judgeClientCPU(&ph, cpu)
	if slowest != "" {
		ph.Notes = append(ph.Notes, fmt.Sprintf("slowest stage: %s (p50 %v, p99 %v), of ok (EVENT write → OK), deliver (EVENT write → live delivery) and read_after_ok (OK → readable by id; read_your_write is the whole EVENT write → readable)", slowest,
			time.Duration(hists[slowest].Quantile(50)).Round(time.Microsecond), time.Duration(hists[slowest].Quantile(99)).Round(time.Microsecond)))
	}
	ph.Notes = append(ph.Notes,
		fmt.Sprintf("%d fresh events of %d content bytes sent one at a time on one connection; a live subscription on a second connection, REQs by id on a third", sampled, o.Size),
		"every stage is measured from wire's send stamp of the EVENT (immediately before its write) on one monotonic clock; none is derived",
		fmt.Sprintf("read_your_write: REQ {ids:[id]} sent right after the OK, retried with backoff 1 ms doubling to 50 ms for up to %v", o.ReadTimeout),
	)
	if n := counts["never_found"]; n > 0 {
		ph.Notes = append(ph.Notes, fmt.Sprintf("%d accepted events never appeared in a REQ by id within %v of their OK", n, o.ReadTimeout))
	}
	if n := counts["found_after_retry"]; n > 0 {
		ph.Notes = append(ph.Notes, fmt.Sprintf("%d accepted events were not yet readable right after their OK (found on a retry)", n))
	}
	if n := counts["never_delivered"]; n > 0 {
		ph.Notes = append(ph.Notes, fmt.Sprintf("%d accepted events were never delivered to the live subscription within %v", n, o.Timeout))
	}
	if deliveredBeforeOK > 0 {
		ph.Notes = append(ph.Notes, fmt.Sprintf("%d events reached the subscriber before their OK reached the publisher", deliveredBeforeOK))
	}
	for _, r := range reasons {
		ph.Errors = verify.AppendUnique(ph.Errors, "not accepted: "+r)
	}
	ph.Verification = &results.Verification{
		Verified: true, Checked: counts["accepted"], Expected: 2 * counts["accepted"],
		Returned: counts["delivered"] + counts["found"], Missing: counts["never_delivered"] + counts["never_found"],
		Duplicated: dups,
	}
	ph.Verification.Passed = ph.Verification.Missing == 0 && dups == 0
	if !ph.Verification.Passed {
		ph.Verification.Notes = append(ph.Verification.Notes, "accepted events missing from the live subscription or from REQs by id (expected counts each event twice: once delivered, once found)")
	}
	return ph, ctx.Err()
}
