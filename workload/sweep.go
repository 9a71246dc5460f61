package workload

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/flagcheck"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/results"
)

// sweepBudget bounds the content bytes pre-signed for one size: the plan
// at a size is at most sweepBudget/size events (at least 200), whatever
// --events asks for (sweepCount).
const sweepBudget = 128 << 20

// sweepCount is the events planned at one size: events, capped so that
// their content fits in sweepBudget (the pre-signed events are held in
// memory twice), but never below 200.
func sweepCount(events, size int) int {
	return min(events, max(200, sweepBudget/max(1, size)))
}

// sweepPlan states the sweep's plan before any work: the sizes, the
// events per size, and the sizes whose planned events are fewer than
// --events ("Sweeping 2 sizes (256 and 131,072 bytes), 2,000 events each;
// 1,024 at 131,072 bytes: at most 128 MiB of pre-signed content per size").
func sweepPlan(events int, sizes []int) string {
	var capped, all []string
	for _, size := range sizes {
		all = append(all, numfmt.Group(int64(size)))
		if n := sweepCount(events, size); n < events {
			capped = append(capped, fmt.Sprintf("%s at %s bytes", numfmt.Group(int64(n)), numfmt.Group(int64(size))))
		}
	}
	list := strings.Join(all, ", ")
	if len(all) > 1 {
		list = strings.Join(all[:len(all)-1], ", ") + " and " + all[len(all)-1]
	}
	s := fmt.Sprintf("Sweeping %s (%s bytes), %s events each", numfmt.Count(len(sizes), "size"), list, numfmt.Group(int64(events)))
	if len(capped) > 0 {
		s += fmt.Sprintf("; %s: at most %s MiB of pre-signed content per size", strings.Join(capped, ", "), numfmt.Group(int64(sweepBudget>>20)))
	}
	return s
}

// sweepFlags are sweep's flags, as the notes of its fan-out runs name
// them (see subFlags).
var sweepFlags = subFlags{count: "the sweep command's --subscribers", events: "the sweep command's --events", grace: "the sweep command's --grace", duration: "--duration"}

// sweepCapNote says that count events were planned at a size instead of
// the events asked for: the flag is named as the sweep command's, for run
// --workloads sweep runs with its defaults and has an --events of its own
// (the corpus size).
func sweepCapNote(count, events int) string {
	return fmt.Sprintf("planned %s events at this size, not the sweep command's --events %s: at most %s MiB of pre-signed content per size (held in memory); the accounts count the %s planned",
		numfmt.Group(int64(count)), numfmt.Group(int64(events)), numfmt.Group(int64(sweepBudget>>20)), numfmt.Group(int64(count)))
}

// SweepOptions configure the payload sweep: at each content size, a
// fan-out run (Subscribe) with fresh events of exactly that size.
// ErrNoSize is returned by Sweep when every size was skipped (too large for
// the relay's announced limits).
var ErrNoSize = errors.New("sweep: no size could run")

func init() {
	Declare[SweepOptions](Decl{Name: "sweep", Brief: "2,000 events per size", Input: NeedsKeys, Adds: true,
		Summary: "Payload sweep: publish and fan-out at each content size; msg/s, MiB/s, mean, p50, p95, p99 per size."})
}

// SweepOptions configure Sweep. Base's Timeout bounds the wait for an OK
// and for an EOSE.
type SweepOptions struct {
	Base        `set:"timeout=10s" set:"timeout_help=How long an EVENT may wait for its OK, and a REQ for its EOSE." param:"-"`
	Sizes       []int         `default:"256,1024,4096,16384,65536,131072" help:"Content sizes in bytes (capped by the relay's announced max_message_length / max_content_length)."`
	Events      int           `default:"2000" help:"Events per size, capped at 128 MiB of content per size (1024 events at 131072 bytes; the cap is never below 200 events)."`
	Publishers  int           `default:"1" help:"Publisher connections."`                          // narwhal's table: 1 producer
	Subscribers int           `default:"1" help:"Subscriber connections (each gets every event)."` // 1 consumer
	Mode        string        `default:"pipeline" enum:"wait,pipeline" help:"wait: one EVENT in flight per publisher; pipeline: up to --window."`
	Window      int           `default:"64" help:"Pipelined: unacknowledged EVENTs per publisher."`
	Rate        float64       `default:"0" help:"Total events/s, open loop; 0: closed loop."`
	Duration    time.Duration `default:"0s" param:"-" help:"Per size: stop publishing after this (0: all events)."`
	Grace       time.Duration `default:"2s" zero:"keep" param:"-" help:"Wait for late deliveries this long after the last OK."`
	// Limits are the relay's announced limits; nil: fetched from NIP-11.
	Limits *nip11.Limitation `kong:"-"`
	// OnSkip is told about each size that was not run, and why.
	OnSkip func(size int, reason string) `kong:"-"`
	// OnSize is called with the size about to run.
	OnSize func(size int) `kong:"-"`
}

// Run sweeps the sizes on env's relay, one at a time (for the progress:
// each size's phase gets the relay's resources over its own timed
// window), with fresh events signed by env's corpus keys. The sizes
// skipped are named in the first phase's notes; none run is an error.
func (o SweepOptions) Run(ctx context.Context, env Env) ([]results.Phase, error) {
	applyDefaults(&o)
	o.fromEnv(env, "", 0)
	if o.Limits == nil {
		o.Limits = &nip11.Limitation{}
		if env.Info != nil {
			o.Limits = &env.Info.Limitation
		}
	}
	var skipped []string
	o.OnSkip = func(size int, reason string) {
		skipped = append(skipped, fmt.Sprintf("sweep: %s bytes skipped: %s", numfmt.Group(int64(size)), reason))
	}
	update := env.progressFor(progress.Counting(sweepPlan(o.Events, o.Sizes), "Swept", "size", "sizes", int64(len(o.Sizes))), int64(len(o.Sizes)))
	sizes := o.Sizes
	var phases []results.Phase
	var err error
	for i, size := range sizes {
		if ctx.Err() != nil {
			break
		}
		o.Sizes = []int{size}
		got, serr := Sweep(ctx, env.URL, env.Corpus, o)
		phases = append(phases, got...)
		if update != nil {
			update(int64(i + 1))
		}
		if serr != nil && !errors.Is(serr, ErrNoSize) {
			err = serr
			break
		}
	}
	oneMemoryFigure(phases)
	if len(phases) > 0 {
		phases[0].Notes = append(phases[0].Notes, skipped...)
	} else if err == nil && ctx.Err() == nil {
		err = fmt.Errorf("%w: %s", ErrNoSize, strings.Join(skipped, "; "))
	}
	return phases, err
}

// Sweep runs the fan-out workload once per payload size and returns one
// phase per size run, named "sweep/<bytes>", with msgs_per_sec (accepted
// events), mb_per_sec (EVENT bytes sent), deliveries_per_sec, and the "ok"
// and "deliver" latencies. A size above the relay's announced
// max_message_length or max_content_length is skipped (OnSkip says so).
// Each phase carries Subscribe's accounts (subscriptions, events,
// deliveries) and verification.
func Sweep(ctx context.Context, url string, c *corpus.Corpus, o SweepOptions) ([]results.Phase, error) {
	applyDefaults(&o)
	lim := sweepLimits(ctx, url, o.Limits)
	var phases []results.Phase
	var skipped []string
	for _, size := range o.Sizes {
		if ctx.Err() != nil {
			break
		}
		ph, why, err := sweepSize(ctx, url, c, o, lim, size)
		if why != "" {
			if o.OnSkip != nil {
				o.OnSkip(size, why)
			}
			if size > 0 {
				skipped = append(skipped, why)
			}
			continue
		}
		if ph != nil {
			phases = append(phases, *ph)
		}
		if err != nil {
			return phases, fmt.Errorf("sweep %d bytes: %w", size, err)
		}
	}
	oneMemoryFigure(phases)
	if len(phases) > 0 {
		for _, s := range skipped {
			phases[0].Notes = append(phases[0].Notes, "sweep size skipped: "+s)
		}
	}
	if len(phases) == 0 && ctx.Err() == nil {
		return nil, fmt.Errorf("%w (%d skipped)", ErrNoSize, len(skipped))
	}
	return phases, ctx.Err()
}

// oneMemoryFigure keeps the client memory of the idle subscriptions to the
// first size's phase. Every size opens the same subscriptions afresh and
// reads the memory before publishing (so the content size plays no part),
// but a later size's connections reuse memory the previous size's freed,
// which the process's resident memory does not give back: its growth reads
// small (22.0 KiB each at the first size, "not measurable: less than 8
// MiB" at the next for the same 400). Later phases lose that reading (note
// and counts) and say where the figure is, or, when the first size's was
// not measurable either, that no size gives one.
func oneMemoryFigure(phases []results.Phase) {
	if len(phases) < 2 {
		return
	}
	pointer := firstSizeMemory(phases[0])
	for i := 1; i < len(phases); i++ {
		ph := &phases[i]
		notes := ph.Notes[:0]
		had := false
		for _, n := range ph.Notes {
			if strings.HasPrefix(n, "client memory for ") || strings.HasPrefix(n, "client memory per subscription not measurable") {
				had = true
				continue
			}
			notes = append(notes, n)
		}
		ph.Notes = notes
		if !had {
			continue
		}
		delete(ph.Counts, results.CountClientRSSIdle)
		delete(ph.Counts, results.CountClientBytesPerSub)
		if pointer != "" {
			ph.Notes = append(ph.Notes, pointer)
		}
	}
}

// firstSizeMemory is the note a later size gives in place of its own
// client-memory reading: where the figure is (the first size's phase), or
// that the first size's reading was not measurable and a later size's,
// reusing memory the first freed, cannot be either; "" when the first size
// has no reading to point to.
func firstSizeMemory(first results.Phase) string {
	size := strings.TrimPrefix(first.Name, "sweep/")
	reuse := "the same subscriptions opened again here reuse memory the previous size's freed, which the process's resident memory does not show"
	for _, n := range first.Notes {
		switch {
		case strings.HasPrefix(n, "client memory for "):
			return fmt.Sprintf("client memory of the idle subscriptions: given once, at the first size (%s bytes; measured before publishing, so the content size plays no part; %s)", size, reuse)
		case strings.HasPrefix(n, "client memory per subscription not measurable"):
			return fmt.Sprintf("client memory of the idle subscriptions: not measurable at the first size (%s bytes; its note says why), and not at this size either: %s", size, reuse)
		}
	}
	return ""
}

// sweepLimits returns lim, or the relay's announced limits (none when its
// NIP-11 document cannot be fetched).
func sweepLimits(ctx context.Context, url string, lim *nip11.Limitation) *nip11.Limitation {
	if lim != nil {
		return lim
	}
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if info, _, err := nip11.Fetch(ictx, url); err == nil {
		return &info.Limitation
	}
	return &nip11.Limitation{}
}

// sweepSize signs the events of one size and runs the fan-out with them. It
// returns why the size was skipped (too large for the relay's limits), or
// the phase (nil if it never started) and Subscribe's error.
func sweepSize(ctx context.Context, url string, c *corpus.Corpus, o SweepOptions, lim *nip11.Limitation, size int) (*results.Phase, string, error) {
	if size <= 0 {
		return nil, "not a positive size", nil
	}
	if lim.MaxContentLength > 0 && size > lim.MaxContentLength {
		return nil, fmt.Sprintf("content of %s bytes exceeds the relay's announced max_content_length %s", numfmt.Group(int64(size)), numfmt.Group(int64(lim.MaxContentLength))), nil
	}
	if o.OnSize != nil {
		o.OnSize(size)
	}
	nonce := RunNonce()
	seed := o.Seed + int64(size)
	count := sweepCount(o.Events, size)
	fresh, err := NewFresh(ctx, c, FreshSpec{Count: count, Size: size, Seed: seed, Channels: ChannelNames(seed, nonce, 1)}, nonce)
	if err != nil {
		return nil, "", err
	}
	maxMsg, maxRunes := 0, 0
	for i, raw := range fresh.Raw {
		maxMsg = max(maxMsg, len(raw)+len(`["EVENT",]`))
		maxRunes = max(maxRunes, utf8.RuneCountInString(fresh.Events[i].Content))
	}
	if lim.MaxMessageLength > 0 && maxMsg > lim.MaxMessageLength {
		return nil, fmt.Sprintf("%s-byte content makes EVENT messages of up to %s bytes, above the relay's announced max_message_length %s", numfmt.Group(int64(size)), numfmt.Group(int64(maxMsg)), numfmt.Group(int64(lim.MaxMessageLength))), nil
	}
	if lim.MaxContentLength > 0 && maxRunes > lim.MaxContentLength {
		return nil, fmt.Sprintf("%s-byte content has up to %s characters, above the relay's announced max_content_length %s", numfmt.Group(int64(size)), numfmt.Group(int64(maxRunes)), numfmt.Group(int64(lim.MaxContentLength))), nil
	}
	ph, err := Subscribe(ctx, url, c, SubscribeOptions{Base: Base{Timeout: o.Timeout, Seed: seed, Dial: o.Dial, Begin: o.Begin},
		Name: results.SweepName(size), Subscribers: o.Subscribers, Publishers: o.Publishers,
		Filter: FilterTag, Events: count, Size: size, Rate: o.Rate, Mode: o.Mode, Window: o.Window,
		Duration: o.Duration, Grace: o.Grace, fresh: fresh, flags: sweepFlags,
	})
	if ph.Counts == nil { // never started
		return nil, "", err
	}
	ph.Workload, ph.Size = "sweep", size
	ph.Params["size"] = size
	ph.Params["max_message_bytes"] = maxMsg
	ph.Rates[results.RateMsgs] = ph.Rates[results.RateEvents]
	ph.Notes = append([]string{fmt.Sprintf("payload sweep at %s content bytes (EVENT messages up to %s bytes): the message rate (msg/s) counts accepted events, MiB/s the EVENT bytes sent", numfmt.Group(int64(size)), numfmt.Group(int64(maxMsg)))}, ph.Notes...)
	if count < o.Events {
		// The plan, fixed before the work: every one of the count events
		// was requested (the accounts say whether they all ran).
		ph.Notes = append(ph.Notes, sweepCapNote(count, o.Events))
	}
	return &ph, "", err
}

// Check checks the options as the CLI's flags set them (Checked).
func (o SweepOptions) Check(r *flagcheck.Ranges, _ CheckInput) {
	if len(o.Sizes) == 0 {
		r.Bad("sizes", `""`, "give at least one size")
	}
	for _, s := range o.Sizes {
		r.Size("sizes", s)
	}
	r.Min("events", o.Events, 1)
	r.Min("publishers", o.Publishers, 1)
	r.Min("subscribers", o.Subscribers, 1)
	r.Min("window", o.Window, 1)
	r.Window("window", o.Window, 64, float64(o.Events))
	r.NotNegative("duration", o.Duration)
	r.RateMax("rate", o.Rate, true, "duration", o.Duration)
	r.Positive("grace", o.Grace)
	r.Positive("timeout", o.Timeout)
	// Costs: one size at a time, its events signed before its clock.
	biggest := 0
	for _, s := range o.Sizes {
		biggest = max(biggest, s)
	}
	r.ConnPair("subscribers", o.Subscribers, "publishers", o.Publishers)
	r.Memory("events", o.Events, float64(o.Events), flagcheck.FreshEventBytes(biggest)+deliveryStateBytes*float64(o.Subscribers), "event of "+fmt.Sprint(biggest)+" bytes, with its delivery time and check marks at each subscriber")
	r.Memory("subscribers", o.Subscribers, float64(o.Subscribers), deliveryStateBytes*float64(o.Events), "subscriber (a delivery time and check marks per event)")
}
