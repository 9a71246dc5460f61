package wire

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relaybench/relaybench/nostr"
)

func TestParseCountObject(t *testing.T) {
	for _, tc := range []struct {
		in     string
		n      int64
		approx bool
		hll    string
		bad    bool
	}{
		{in: `{"count":42}`, n: 42},
		{in: ` {"count": 7, "approximate": true} `, n: 7, approx: true},
		{in: `{"count":3,"hll":"0a0b"}`, n: 3, hll: "0a0b"},
		{in: `0`, bad: true},
		{in: `[1]`, bad: true},
		{in: `{"approximate":false}`, bad: true},
		{in: `{"count":1.5}`, bad: true},
		{in: `{"count":-1}`, bad: true},
		{in: `{"count":"9"}`, bad: true},
	} {
		n, approx, hll, err := ParseCountObject([]byte(tc.in))
		if (err != nil) != tc.bad || (!tc.bad && (n != tc.n || approx != tc.approx || hll != tc.hll)) {
			t.Errorf("%s: %d %v %q %v", tc.in, n, approx, hll, err)
		}
	}
}

func TestCount(t *testing.T) {
	r := newTestRelay(t, nil, func(tc *tconn, msg []byte) {
		arr := decode(t, msg)
		if label(arr) != "COUNT" {
			return
		}
		switch string(arr[1]) {
		case `"ok"`:
			tc.send(`["COUNT","other",{"count":1}]`) // not ours: ignored
			tc.send(`["COUNT","ok",{"count":12,"approximate":true}]`)
		case `"bare"`:
			tc.send(`["COUNT","bare",12]`)
		case `"closed"`:
			tc.send(`["CLOSED","closed","restricted: no counting"]`)
		}
	})
	c := dialT(t, r.url, Options{})
	f := []nostr.Filter{{Kinds: []int{1}}}
	res, err := c.Count(context.Background(), "ok", f)
	if err != nil || res.Ended != EndCount || !res.HasCount || res.Count != 12 || !res.Approximate || res.End < res.Sent {
		t.Fatalf("%+v %v", res, err)
	}
	if got := r.received(); got[0] != `["COUNT","ok",{"kinds":[1]}]` {
		t.Errorf("sent %q", got[0])
	}
	res, err = c.Count(context.Background(), "bare", f)
	if err != nil || res.Ended != EndCount || res.HasCount || res.BadObject == "" || !res.Bare || res.Count != 12 {
		t.Fatalf("bare: %+v %v", res, err)
	}
	res, err = c.Count(context.Background(), "closed", f)
	if err != nil || res.Ended != EndClosed || res.Class != ClassRestricted {
		t.Fatalf("closed: %+v %v", res, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res, err = c.Count(ctx, "silent", f)
	if !errors.Is(err, ErrTimeout) || res.Ended != EndTimeout {
		t.Fatalf("silent: %+v %v", res, err)
	}
	// The id is free again after each answer or timeout.
	if res, err := c.Count(context.Background(), "ok", f); err != nil || res.Count != 12 {
		t.Fatalf("again: %+v %v", res, err)
	}
	if st := c.Stats(); st.Counts != 5 || st.Malformed != 0 {
		t.Errorf("stats %+v", st)
	}
}
