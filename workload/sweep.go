package workload

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/wire"
)

// DefaultSweepSizes are the content sizes of the payload sweep (narwhal's
// table runs 256 B to 128 KB).
var DefaultSweepSizes = []int{256, 1024, 4096, 16384, 65536, 131072}

// sweepBudget bounds the content bytes pre-signed for one size.
const sweepBudget = 128 << 20

// SweepOptions configure the payload sweep: at each content size, a
// fan-out run (Subscribe) with fresh events of exactly that size.
// ErrNoSize is returned by Sweep when every size was skipped (too large for
// the relay's announced limits).
var ErrNoSize = errors.New("sweep: no size could run")

// SweepOptions configure Sweep.
type SweepOptions struct {
	Sizes       []int         // content sizes in bytes (default DefaultSweepSizes)
	Events      int           // events per size (default 2000)
	Publishers  int           // default 1 (narwhal's table: 1 producer)
	Subscribers int           // default 1 (1 consumer)
	Mode        string        // ModeWait or ModePipeline (default pipeline)
	Window      int           // pipelined window (default 64)
	Rate        float64       // total events/s, 0: closed loop
	Duration    time.Duration // per size: stop publishing after this (0: all Events)
	Grace       time.Duration
	Timeout     time.Duration
	Seed        int64
	Dial        wire.Options
	// Limits are the relay's announced limits; nil: fetched from NIP-11.
	Limits *nip11.Limitation
	// OnSkip is told about each size that was not run, and why.
	OnSkip func(size int, reason string)
	// Progress is called with the size about to run.
	Progress func(size int)
	// Begin samples the relay's resources over each size's timed window
	// (nil: not observed).
	Begin Sampler
}

// Sweep runs the fan-out workload once per payload size and returns one
// phase per size run, named "sweep/<bytes>", with msgs_per_sec (accepted
// events), mb_per_sec (EVENT bytes sent), deliveries_per_sec, and the "ok"
// and "deliver" latencies. A size above the relay's announced
// max_message_length or max_content_length is skipped (OnSkip says so).
// Each phase carries Subscribe's accounts (subscriptions, events,
// deliveries) and verification.
func Sweep(ctx context.Context, url string, c *corpus.Corpus, o SweepOptions) ([]results.Phase, error) {
	o.defaults()
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

func (o *SweepOptions) defaults() {
	if len(o.Sizes) == 0 {
		o.Sizes = DefaultSweepSizes
	}
	if o.Events <= 0 {
		o.Events = 2000
	}
	if o.Publishers <= 0 {
		o.Publishers = 1
	}
	if o.Subscribers <= 0 {
		o.Subscribers = 1
	}
	if o.Mode == "" {
		o.Mode = ModePipeline
	}
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
		return nil, fmt.Sprintf("content of %d bytes exceeds the relay's announced max_content_length %d", size, lim.MaxContentLength), nil
	}
	if o.Progress != nil {
		o.Progress(size)
	}
	nonce := RunNonce()
	seed := o.Seed + int64(size)
	count := min(o.Events, max(200, sweepBudget/size)) // pre-signed events are held in memory twice
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
		return nil, fmt.Sprintf("%d-byte content makes EVENT messages of up to %d bytes, above the relay's announced max_message_length %d", size, maxMsg, lim.MaxMessageLength), nil
	}
	if lim.MaxContentLength > 0 && maxRunes > lim.MaxContentLength {
		return nil, fmt.Sprintf("%d-byte content has up to %d characters, above the relay's announced max_content_length %d", size, maxRunes, lim.MaxContentLength), nil
	}
	ph, err := Subscribe(ctx, url, c, SubscribeOptions{
		Name: results.SweepName(size), Subscribers: o.Subscribers, Publishers: o.Publishers,
		Filter: FilterTag, Events: count, Size: size, Rate: o.Rate, Mode: o.Mode, Window: o.Window,
		Duration: o.Duration, Grace: o.Grace, Timeout: o.Timeout, Seed: seed, Dial: o.Dial, fresh: fresh,
		Begin: o.Begin,
	})
	if ph.Counts == nil { // never started
		return nil, "", err
	}
	ph.Workload, ph.Size = "sweep", size
	ph.Params["size"] = size
	ph.Params["max_message_bytes"] = maxMsg
	ph.Rates[results.RateMsgs] = ph.Rates[results.RateEvents]
	ph.Notes = append([]string{fmt.Sprintf("payload sweep at %d content bytes (EVENT messages up to %d bytes): msgs_per_sec counts accepted events, mb_per_sec the EVENT bytes sent", size, maxMsg)}, ph.Notes...)
	if count < o.Events {
		ph.Notes = append(ph.Notes, fmt.Sprintf("%d events instead of %d at this size: the pre-signed events are kept in memory (budget %d MB)", count, o.Events, sweepBudget>>20))
	}
	return &ph, "", err
}
