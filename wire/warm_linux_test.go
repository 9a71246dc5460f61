package wire

import (
	"fmt"
	"testing"
)

// On a shared reader, a subscription's KnownHandler.Warm runs before the
// messages that arrive for it are handled (the connection's last
// subscription is known once its EOSE was), on the reader, never during a
// handler; the messages are handled as without it. Run with -race: Warm
// and the handlers share state without a lock.
func TestSharedReaderWarmsBeforeReading(t *testing.T) {
	const events = 3
	next := make(chan struct{})
	r := streamOnREQ(t, func(tc *tconn, sub string) {
		if tc.send(`["EOSE",`+sub+`]`) != nil {
			return
		}
		<-next
		for i := range events {
			_, ev := fakeEvent(i, "x")
			if tc.send(`["EVENT",`+sub+`,`+string(ev)+`]`) != nil {
				return
			}
		}
	})
	c := dialT(t, r.url, Options{SharedReader: true})
	var got []string // reader only
	nev, inHandler := 0, false
	eosed, done := make(chan struct{}), make(chan struct{})
	h := SubHandler{
		OnEvent: func(raw []byte, _ int64) {
			inHandler = true
			got = append(got, fmt.Sprintf("event %d", nev))
			if nev++; nev == events {
				close(done)
			}
			inHandler = false
		},
		OnEOSE: func(int64) { got = append(got, "eose"); close(eosed) },
		Known: knownFuncs{warm: func() int {
			if inHandler {
				t.Error("Warm ran during a handler")
			}
			if n := len(got); n == 0 || got[n-1] != "warm" {
				got = append(got, "warm")
			}
			return len(got)
		}},
	}
	if _, err := c.Req("s", nil, h); err != nil {
		t.Fatal(err)
	}
	within(t, eosed, "EOSE")
	close(next)
	within(t, done, "the events")
	// after EOSE, the first events' data is warmed before it is read; later
	// ones may come in the same read
	if len(got) < 3 || got[0] != "eose" || got[1] != "warm" || got[2] != "event 0" {
		t.Errorf("order %q, want eose, warm, then the events", got)
	}
	n := 0
	for _, g := range got {
		if g != "warm" {
			n++
		}
	}
	if n != 1+events {
		t.Errorf("handled %d messages, want %d: %q", n, 1+events, got)
	}
}
