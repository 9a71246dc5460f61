package wire

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/nostr"
)

// QueryOpen with keep leaves a subscription open after EOSE; a second
// QueryOpen under its id sends the REQ without a CLOSE before it (NIP-01:
// the new subscription replaces the old one), and everything that comes
// under the id from then on is the new answer's, what the relay sent for
// the old filters first included; it is closed once answered, and closing
// the replaced Sub sends nothing. Req under an open id is still refused.
func TestQueryOpenReplaces(t *testing.T) {
	reqs := 0
	r := newTestRelay(t, nil, func(tc *tconn, msg []byte) {
		arr := decode(t, msg)
		if label(arr) != "REQ" {
			return
		}
		reqs++
		sub := string(arr[1])
		if reqs == 2 { // a live event of the old subscription, sent before the REQ was read
			tc.send(`["EVENT",` + sub + `,{"id":"old"}]`)
		}
		tc.send(fmt.Sprintf(`["EVENT",%s,{"id":"req%d"}]`, sub, reqs))
		tc.send(`["EOSE",` + sub + `]`)
	})
	c := dialT(t, r.url, Options{})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	first, old, err := c.QueryOpen(ctx, "view", []nostr.Filter{{Kinds: []int{1}}}, true)
	if err != nil || first.Ended != EndEOSE || len(first.Events) != 1 || old == nil || old.ID() != "view" {
		t.Fatalf("first: %+v, %v, %v", first, old, err)
	}
	if _, err := c.Req("view", []nostr.Filter{{Kinds: []int{2}}}, SubHandler{}); !errors.Is(err, ErrSubExists) {
		t.Fatalf("Req under an open id: %v", err)
	}
	second, sub, err := c.QueryOpen(ctx, "view", []nostr.Filter{{Kinds: []int{3}}}, false)
	if err != nil || second.Ended != EndEOSE || sub != nil {
		t.Fatalf("second: %+v, %v, %v", second, sub, err)
	}
	if got := fmt.Sprintf("%s", second.Events); got != `[{"id":"old"} {"id":"req2"}]` {
		t.Fatalf("second answer %s", got)
	}
	old.Close() // replaced: no CLOSE
	if _, err := c.Query(ctx, "end", []nostr.Filter{{Kinds: []int{4}}}); err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, m := range r.waitReceived(t, 5) {
		arr := decode(t, []byte(m))
		labels = append(labels, label(arr)+" "+string(arr[1]))
	}
	want := `REQ "view",REQ "view",CLOSE "view",REQ "end",CLOSE "end"`
	if got := strings.Join(labels, ","); got != want {
		t.Fatalf("relay received %s\nwant %s", got, want)
	}
}
