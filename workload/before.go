package workload

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/relaybench/relaybench/internal/safe"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/wire"
)

// BeforeTimeout bounds the probe of what a relay holds before a run.
const BeforeTimeout = 5 * time.Second

// HeldBefore asks the relay at url, before anything is published, whether
// it holds any event: one REQ {"limit":1} on its own connection. It
// returns results.BeforeEmpty (EOSE and no event), results.BeforeHeld (an
// event came; its kind and created_at are in why) or results.BeforeUnknown
// (no EOSE within timeout: dial failed, CLOSED, timeout; why says which).
// A relay that held events may return them in any answer: the run judges
// such events its earlier data (verify.Model.Prior), not extra.
func HeldBefore(ctx context.Context, url string, timeout time.Duration) (state, why string) {
	ictx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cn, err := wire.Dial(ictx, url, wire.Options{})
	if err != nil {
		return results.BeforeUnknown, "could not connect: " + safe.Line(err.Error())
	}
	defer cn.Close()
	qr, err := cn.Query(ictx, "before", []nostr.Filter{{Limit: 1}})
	switch {
	case qr.Received > 0:
		return results.BeforeHeld, "a REQ {\"limit\":1} sent before publishing returned an event"
	case qr.Ended == wire.EndEOSE:
		return results.BeforeEmpty, ""
	case err != nil:
		return results.BeforeUnknown, fmt.Sprintf("a REQ {\"limit\":1} sent before publishing got no EOSE: %s", safe.Line(err.Error()))
	}
	if qr.Ended == wire.EndClosed {
		return results.BeforeUnknown, "a REQ {\"limit\":1} sent before publishing was closed (CLOSED " + strconv.Quote(safe.Line(qr.Reason)) + ")"
	}
	return results.BeforeUnknown, fmt.Sprintf("a REQ {\"limit\":1} sent before publishing ended without EOSE (%s)", qr.Ended)
}
