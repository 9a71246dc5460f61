package workload

import (
	"context"
	"fmt"
	"sort"
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

// Subscription filter kinds of the subscribe workload.
const (
	FilterTag    = "tag"    // {"#t": k channels, since}
	FilterAuthor = "author" // {"authors": k authors, since}
	FilterKind   = "kind"   // {"kinds": [1], since}: every event reaches every such subscriber
	FilterMix    = "mix"    // subscriber i uses tag, author, kind for i mod 3
)

// SubscribeOptions configure the subscribe (fan-out) workload: Subscribers
// connections hold live REQs while Publishers connections publish fresh
// events carrying one of Channels channel tags.
type SubscribeOptions struct {
	Name        string // phase name (default "subscribe")
	Subscribers int    // subscriber connections, one live REQ each (default 10)
	Publishers  int    // publisher connections (default 2)
	Channels    int    // distinct channel tags (default 10)
	// Overlap is how many channels (tag filter) or authors (author filter)
	// each subscriber follows (default 1); above 1 an event reaches several
	// subscribers.
	Overlap int
	Filter  string // FilterTag, FilterAuthor, FilterKind or FilterMix (default mix)
	Events  int    // fresh events to pre-sign and publish (default rate×duration, else 10000)
	Size    int    // content bytes of each event (default 1024)
	Authors int    // corpus keys signing the fresh events (default min(50, corpus authors))
	// Rate is the total target publish rate in events/s, spread over the
	// publishers, open loop (send times are scheduled; latency and lateness
	// are also measured from the intended time). 0: closed loop (Mode).
	Rate     float64
	Mode     string        // closed loop: ModeWait (default) or ModePipeline
	Window   int           // max unacknowledged EVENTs per publisher (pipeline, open loop; default 64, 1024 open loop)
	Duration time.Duration // stop publishing after this (0: when Events are sent)
	// Grace is how long to wait after the last OK for deliveries still on
	// their way before the missing ones are counted (default 2 s).
	Grace   time.Duration
	Timeout time.Duration // OK and EOSE timeout (default 10 s)
	Seed    int64
	Dial    wire.Options
	// Progress is called with the number of events whose OK is in.
	Progress func(done int64)

	fresh *Fresh // pre-signed events (sweep signs its own); nil: sign here
}

func (o *SubscribeOptions) defaults() error {
	if o.Name == "" {
		o.Name = "subscribe"
	}
	if o.Subscribers <= 0 {
		o.Subscribers = 10
	}
	if o.Publishers <= 0 {
		o.Publishers = 2
	}
	if o.Channels <= 0 {
		o.Channels = 10
	}
	if o.Overlap <= 0 {
		o.Overlap = 1
	}
	if o.Filter == "" {
		o.Filter = FilterMix
	}
	switch o.Filter {
	case FilterTag, FilterAuthor, FilterKind, FilterMix:
	default:
		return fmt.Errorf("subscribe filter %q: want tag, author, kind or mix", o.Filter)
	}
	if o.Mode == "" {
		o.Mode = ModeWait
	}
	if o.Mode != ModeWait && o.Mode != ModePipeline {
		return fmt.Errorf("publish mode %q: want %q or %q", o.Mode, ModeWait, ModePipeline)
	}
	if o.Window <= 0 {
		o.Window = 64
		if o.Rate > 0 {
			o.Window = 1024
		}
	}
	if o.Size <= 0 {
		o.Size = 1024
	}
	if o.Events <= 0 {
		o.Events = 10000
		if o.Rate > 0 && o.Duration > 0 {
			o.Events = max(1, int(o.Rate*o.Duration.Seconds()))
		}
	}
	if o.Grace <= 0 {
		o.Grace = 2 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	o.Overlap = min(o.Overlap, o.Channels)
	return nil
}

// ---------------------------------------------------------------------------
// Subscribe.

// subscriber is one connection holding one live REQ. Its callbacks run on
// the connection's reader goroutine; mu lets the workload stop and read it.
type subscriber struct {
	mu       sync.Mutex
	kind     string
	filter   nostr.Filter
	eose     chan struct{} // closed at EOSE, or at a CLOSED before it
	eoseOnce sync.Once
	closed   string
	eoseSeen bool
	stopped  bool
	got      []uint16 // deliveries per fresh event
	firsts   int64    // distinct fresh events delivered
	dups     int64
	foreign  int64 // events after EOSE that are not ours
	preEOSE  int64 // stored events sent before EOSE
	lastRecv int64
	hist     *metrics.Histogram
	series   *metrics.Series // counts only (per-second latency is sampled into a shared series)
	samples  [][]byte        // first deliveries kept for signature checks
}

const sigSamplesPerSub = 8

// Subscribe runs the fan-out workload: it pre-signs fresh events, opens the
// subscriptions and waits for each EOSE, then publishes and times every
// delivery from the publisher's send to the subscriber's receive. Every
// subscriber's deliveries are checked against the accepted events matching
// its filter.
func Subscribe(ctx context.Context, url string, c *corpus.Corpus, o SubscribeOptions) (results.Phase, error) {
	ph := results.Phase{Name: o.Name, Workload: "subscribe"}
	if err := o.defaults(); err != nil {
		return ph, err
	}
	ph.Name = o.Name
	nonce := RunNonce()
	channels := ChannelNames(o.Seed, nonce, o.Channels)
	fresh := o.fresh
	if fresh == nil {
		var err error
		fresh, err = NewFresh(ctx, c, FreshSpec{Count: o.Events, Size: o.Size, Seed: o.Seed, Authors: o.Authors, Channels: channels}, nonce)
		if err != nil {
			return ph, err
		}
	} else {
		channels = freshChannels(fresh)
		o.Channels = len(channels)
		o.Overlap = min(o.Overlap, o.Channels)
	}
	nEv := len(fresh.Events)
	since := fresh.Events[0].CreatedAt

	subConns, err := wire.DialPool(ctx, url, o.Subscribers, o.Dial)
	if err != nil {
		return ph, fmt.Errorf("subscribers: %w", err)
	}
	defer closeAll(subConns)
	pd := o.Dial
	pd.OKTimeout = o.Timeout
	pubConns, err := wire.DialPool(ctx, url, o.Publishers, pd)
	if err != nil {
		return ph, fmt.Errorf("publishers: %w", err)
	}
	defer closeAll(pubConns)

	out := newLiveOut(nEv)
	dlSeries := metrics.NewSeries(0) // re-based below, once the clock starts
	var dlMu sync.Mutex
	subs := make([]*subscriber, o.Subscribers)
	for i := range subs {
		kind := o.Filter
		if kind == FilterMix {
			kind = []string{FilterTag, FilterAuthor, FilterKind}[i%3]
		}
		s := &subscriber{kind: kind, eose: make(chan struct{}), got: make([]uint16, nEv), hist: metrics.NewHistogram(), series: metrics.NewSeries(0)}
		s.filter = subFilter(kind, i, o.Overlap, channels, fresh.Authors, since)
		subs[i] = s
	}
	// Open every subscription and wait for its EOSE before publishing.
	for i, s := range subs {
		s := s
		h := wire.SubHandler{
			OnEvent: func(raw []byte, recv int64) {
				n, ours := fresh.Index(raw)
				s.mu.Lock()
				defer s.mu.Unlock()
				if s.stopped {
					return
				}
				if !s.eoseSeen {
					s.preEOSE++
					return
				}
				if !ours {
					s.foreign++
					return
				}
				if s.got[n] < 65535 {
					s.got[n]++
				}
				if s.got[n] > 1 {
					s.dups++
					return
				}
				s.firsts++
				s.lastRecv = recv
				s.series.Add(recv, "deliveries", 1)
				if sent := out.sentAt[n].Load(); sent > 0 {
					lat := recv - sent
					s.hist.Record(lat)
					if s.firsts%8 == 1 {
						dlMu.Lock()
						dlSeries.Latency(recv, lat)
						dlMu.Unlock()
					}
				}
				if len(s.samples) < sigSamplesPerSub {
					s.samples = append(s.samples, append([]byte(nil), raw...))
				}
			},
			OnEOSE: func(int64) {
				s.mu.Lock()
				s.eoseSeen = true
				s.mu.Unlock()
				s.eoseOnce.Do(func() { close(s.eose) })
			},
			OnClosed: func(reason string, _ wire.Class, _ int64) {
				s.mu.Lock()
				s.closed = "CLOSED: " + reason
				s.mu.Unlock()
				s.eoseOnce.Do(func() { close(s.eose) }) // no EOSE will come
			},
		}
		if _, err := subConns[i].Req("live-"+strconv.Itoa(i), []nostr.Filter{s.filter}, h); err != nil {
			return ph, fmt.Errorf("subscriber %d: REQ: %w", i, err)
		}
	}
	eoseDeadline := time.NewTimer(o.Timeout)
	for i, s := range subs {
		select {
		case <-s.eose:
			s.mu.Lock()
			refused := !s.eoseSeen
			s.mu.Unlock()
			if refused {
				return ph, fmt.Errorf("subscriber %d: the relay refused the subscription: %s", i, subState(s, subConns[i]))
			}
		case <-eoseDeadline.C:
			return ph, fmt.Errorf("subscriber %d: no EOSE within %v (%s)", i, o.Timeout, subState(s, subConns[i]))
		case <-subConns[i].Done():
			return ph, fmt.Errorf("subscriber %d: connection lost before EOSE: %v", i, subConns[i].Err())
		case <-ctx.Done():
			return ph, ctx.Err()
		}
	}
	eoseDeadline.Stop()

	// The plan: events dealt round-robin to the publishers.
	plan := &livePlan{conns: pubConns, fresh: fresh, mode: o.Mode, window: o.Window, timeout: o.Timeout, progress: o.Progress}
	plan.order = make([][]int, o.Publishers)
	for n := 0; n < nEv; n++ {
		plan.order[n%o.Publishers] = append(plan.order[n%o.Publishers], n)
	}

	cpu0 := CPUTime()
	start := mono.Now()
	series := metrics.NewSeries(start)
	dlSeries = metrics.NewSeries(start)
	for _, s := range subs {
		s.mu.Lock()
		s.series = metrics.NewSeries(start)
		s.mu.Unlock()
	}
	plan.series = series
	if o.Duration > 0 {
		plan.stopAt = start + int64(o.Duration)
	}
	if o.Rate > 0 {
		plan.intended = make([][]int64, o.Publishers)
		for w := range plan.order {
			for _, n := range plan.order[w] {
				plan.intended[w] = append(plan.intended[w], start+int64(float64(n)*1e9/o.Rate))
			}
		}
	}
	runLive(ctx, plan, out)
	lastOK := out.lastOK.Load()

	// Expected deliveries per subscriber; wait for them (bounded by Grace).
	expected := make([]int64, len(subs))
	for i, s := range subs {
		for n := 0; n < nEv; n++ {
			if out.outcomes[n] == Accepted && s.filter.Matches(fresh.Events[n]) {
				expected[i]++
			}
		}
	}
	graceEnd := time.Now().Add(o.Grace)
	waitedGrace := false
	for {
		complete := true
		for i, s := range subs {
			s.mu.Lock()
			f := s.firsts
			s.mu.Unlock()
			if f < expected[i] {
				complete = false
				break
			}
		}
		if complete || ctx.Err() != nil {
			break
		}
		if time.Now().After(graceEnd) {
			waitedGrace = true
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, s := range subs {
		s.mu.Lock()
		s.stopped = true
		s.mu.Unlock()
	}
	cpu := CPUTime() - cpu0
	end := lastOK
	for _, s := range subs {
		end = max(end, s.lastRecv)
	}
	if end <= start {
		end = mono.Now()
	}

	ph.Params = map[string]any{
		"subscribers": o.Subscribers, "publishers": o.Publishers, "channels": o.Channels, "overlap": o.Overlap,
		"filter": o.Filter, "events": nEv, "size": o.Size, "rate": o.Rate, "mode": o.Mode, "window": o.Window,
		"duration": o.Duration.String(), "grace": o.Grace.String(), "timeout": o.Timeout.String(),
	}
	ph.Start = mono.Time(start)
	ph.Duration = end - start
	ph.Counts = map[string]int64{}
	ph.Refused = map[string]int64{}
	ph.Latency = map[string]*results.Histogram{}
	publishSummary(&ph, out, nEv)
	if n := out.cut.Load(); n > 0 {
		ph.Notes = append(ph.Notes, fmt.Sprintf("publishing stopped at --duration %v with %d pre-signed events unsent", o.Duration, n))
	} else if o.Duration > 0 && ctx.Err() == nil && lastOK-start < int64(o.Duration) {
		ph.Notes = append(ph.Notes, fmt.Sprintf("all %d pre-signed events were published in %v, before --duration %v ended (raise --events)", nEv, time.Duration(lastOK-start).Round(time.Millisecond), o.Duration))
	}
	allConns := append(append([]*wire.Conn(nil), pubConns...), subConns...)
	addConnStats(ctx, &ph, allConns)

	// Completeness, per subscriber, then per filter kind.
	dl := metrics.NewHistogram()
	groups := map[string]*results.Group{}
	groupHist := map[string]*metrics.Histogram{}
	total := &results.Verification{Verified: true}
	var sigBad, notAcked int64
	for _, s := range subs {
		series.Merge(s.series)
	}
	series.Merge(dlSeries)
	for i, s := range subs {
		v := results.Verification{Verified: true, Checked: 1, Expected: expected[i], Duplicated: s.dups}
		for n := 0; n < nEv; n++ {
			g := s.got[n]
			match := s.filter.Matches(fresh.Events[n])
			exp := out.outcomes[n] == Accepted && match
			switch {
			case exp && g == 0:
				v.Missing++
			case g == 0:
			case !match:
				v.NotMatching++
			case !exp && out.outcomes[n] == Refused:
				v.Extra++
				v.Notes = verify.AppendUnique(v.Notes, "delivered events the relay had refused")
			case !exp:
				notAcked++ // delivered, but its OK never came (timeout, connection loss)
			}
		}
		v.Returned = s.firsts + s.dups
		for _, raw := range s.samples {
			e, err := nostr.ParseEvent(raw)
			if err != nil || !e.CheckID() || !verify.ValidSignature(e) {
				v.Invalid++
				sigBad++
			}
		}
		if s.closed != "" {
			ph.Errors = verify.AppendUnique(ph.Errors, fmt.Sprintf("subscriber %d: relay ended the subscription: %s", i, s.closed))
		}
		ph.Counts["deliveries"] += s.firsts
		ph.Counts["duplicated"] += s.dups
		ph.Counts["foreign"] += s.foreign
		ph.Counts["before_eose"] += s.preEOSE
		dl.Merge(s.hist)
		g := groups[s.kind]
		if g == nil {
			g = &results.Group{Name: s.kind, Counts: map[string]int64{}, Rates: map[string]float64{}, Latency: map[string]*results.Histogram{}, Verification: &results.Verification{Verified: true}}
			groups[s.kind] = g
			groupHist[s.kind] = metrics.NewHistogram()
		}
		groupHist[s.kind].Merge(s.hist)
		g.Counts["subscribers"]++
		g.Counts["deliveries"] += s.firsts
		for _, t := range []*results.Verification{g.Verification, total} {
			addVerification(t, &v)
		}
	}
	ph.Counts["expected"] = total.Expected
	ph.Counts["missing"] = total.Missing
	ph.Counts["delivered_unacknowledged"] = notAcked
	ph.Latency["deliver"] = dl.Result()
	secs := float64(ph.Duration) / 1e9
	ph.Rates = map[string]float64{}
	if secs > 0 {
		ph.Rates["events_per_sec"] = float64(ph.Counts["accepted"]) / secs
		ph.Rates["deliveries_per_sec"] = float64(ph.Counts["deliveries"]) / secs
		ph.Rates["mb_per_sec"] = float64(ph.Counts["bytes_sent"]) / secs / 1e6
	}
	if acc := ph.Counts["accepted"]; acc > 0 {
		ph.Rates["fanout"] = float64(total.Expected) / float64(acc)
	}
	for _, k := range []string{FilterTag, FilterAuthor, FilterKind} {
		g := groups[k]
		if g == nil {
			continue
		}
		g.Latency["deliver"] = groupHist[k].Result()
		if secs > 0 {
			g.Rates["deliveries_per_sec"] = float64(g.Counts["deliveries"]) / secs
		}
		finishVerification(g.Verification)
		ph.Groups = append(ph.Groups, *g)
	}
	finishVerification(total)
	ph.Verification = total
	ph.Series = series.Result(end)
	judgeClientCPU(&ph, cpu)

	follows := fmt.Sprintf("each following %d of %d channels or %d of %d authors", o.Overlap, o.Channels, min(o.Overlap, len(fresh.Authors)), len(fresh.Authors))
	switch o.Filter {
	case FilterKind:
		follows = "kind 1: every event reaches every subscriber"
	case FilterTag:
		follows = fmt.Sprintf("each following %d of %d channels", o.Overlap, o.Channels)
	case FilterAuthor:
		follows = fmt.Sprintf("each following %d of %d authors", min(o.Overlap, len(fresh.Authors)), len(fresh.Authors))
	}
	ph.Notes = append(ph.Notes,
		fmt.Sprintf("%d subscribers (%s filters, %s) each waited for EOSE before publishing; %d publishers sent %d fresh events of %d content bytes signed before the clock",
			o.Subscribers, o.Filter, follows, o.Publishers, nEv, o.Size),
		"deliver latency: publisher's clock just before the EVENT write → subscriber's read of the delivery (one monotonic clock); per-second latency in the series is a 1-in-8 sample of it",
		"timed window: first EVENT write → the later of the last OK and the last delivery",
	)
	if o.Rate > 0 {
		ph.Notes = append(ph.Notes, fmt.Sprintf("open loop at %.0f events/s in total (at most %d unacknowledged per publisher)", o.Rate, o.Window))
	} else if o.Mode == ModeWait {
		ph.Notes = append(ph.Notes, "closed loop: one EVENT in flight per publisher")
	} else {
		ph.Notes = append(ph.Notes, fmt.Sprintf("closed loop, pipelined: up to %d unacknowledged EVENTs per publisher", o.Window))
	}
	if total.Missing > 0 {
		if waitedGrace {
			ph.Notes = append(ph.Notes, fmt.Sprintf("%d expected deliveries never arrived, though relaybench waited %v after the last OK", total.Missing, o.Grace))
		} else {
			ph.Notes = append(ph.Notes, fmt.Sprintf("%d expected deliveries missing (interrupted)", total.Missing))
		}
	}
	if total.Duplicated > 0 {
		ph.Notes = append(ph.Notes, fmt.Sprintf("%d deliveries were duplicates of an event the subscriber already had", total.Duplicated))
	}
	if n := ph.Counts["foreign"]; n > 0 {
		ph.Notes = append(ph.Notes, fmt.Sprintf("%d live events were not relaybench's (other clients of this relay); not counted as deliveries", n))
	}
	if notAcked > 0 {
		ph.Notes = append(ph.Notes, fmt.Sprintf("%d deliveries were of events whose OK never arrived (not counted as expected)", notAcked))
	}
	if sigBad > 0 {
		ph.Notes = append(ph.Notes, fmt.Sprintf("%d sampled deliveries had a bad id or signature", sigBad))
	}
	return ph, ctx.Err()
}

func addVerification(t, v *results.Verification) {
	t.Checked += v.Checked
	t.Expected += v.Expected
	t.Returned += v.Returned
	t.Missing += v.Missing
	t.Extra += v.Extra
	t.NotMatching += v.NotMatching
	t.Invalid += v.Invalid
	t.Duplicated += v.Duplicated
	t.Notes = verify.AppendUnique(t.Notes, v.Notes...)
}

func finishVerification(v *results.Verification) {
	v.Passed = v.Missing == 0 && v.Extra == 0 && v.NotMatching == 0 && v.Invalid == 0 && v.Duplicated == 0
	if v.Missing > 0 {
		v.Notes = verify.AppendUnique(v.Notes, "accepted events matching a live subscription were not delivered to it")
	}
	if v.NotMatching > 0 {
		v.Notes = verify.AppendUnique(v.Notes, "events were delivered to subscriptions whose filter they do not match")
	}
	if v.Duplicated > 0 {
		v.Notes = verify.AppendUnique(v.Notes, "events were delivered more than once to one subscription")
	}
}

// subFilter is subscriber i's filter of the given kind.
func subFilter(kind string, i, overlap int, channels, authors []string, since int64) nostr.Filter {
	f := nostr.Filter{Since: nostr.Int64(since)}
	switch kind {
	case FilterTag:
		var vals []string
		for j := 0; j < overlap && j < len(channels); j++ {
			vals = append(vals, channels[(i+j)%len(channels)])
		}
		f.Tags = map[string][]string{"t": vals}
	case FilterAuthor:
		for j := 0; j < overlap && j < len(authors); j++ {
			f.Authors = append(f.Authors, authors[(i+j)%len(authors)])
		}
	default:
		f.Kinds = []int{1}
	}
	return f
}

// freshChannels lists the distinct channel tags of fresh events, in order.
func freshChannels(f *Fresh) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range f.Events {
		if v := e.TagValue("t"); v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

func subState(s *subscriber, cn *wire.Conn) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed != "" {
		return s.closed
	}
	if err := cn.Err(); err != nil {
		return err.Error()
	}
	return "still open"
}

func closeAll(conns []*wire.Conn) {
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
}
