package workload

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/rlimit"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/wire"
)

func noteWith(notes []string, s string) string {
	for _, n := range notes {
		if strings.Contains(n, s) {
			return n
		}
	}
	return ""
}

// A relay that drops every 5th delivery while the client idles and reads
// everything: the note blames the relay, with the evidence.
func TestSubscribeMissingBlamesRelay(t *testing.T) {
	ph, _ := runSubscribe(t, testrelay.Config{Verify: true, DropDeliveriesEvery: 5}, subHonest)
	n := noteWith(ph.Notes, "owed deliveries timed out")
	if n == "" {
		t.Fatalf("no explanation of the missing deliveries: %v", ph.Notes)
	}
	if v := ph.Verification; v.Missing != 24 || v.Status() != results.VerificationFailed {
		t.Errorf("deliveries the relay dropped: missing %d (%s), want 24, failed", v.Missing, v.Status())
	}
	for _, want := range []string{"24 owed deliveries timed out: the relay dropped them", "read every byte the relay sent",
		"client CPU", "had not handled when the grace ended: 0 B on 0 connections", "of 4 subscribers owed deliveries"} {
		if !strings.Contains(n, want) {
			t.Errorf("note lacks %q: %s", want, n)
		}
	}
	if ph.Counts["client_unread_bytes_at_end"] != 0 {
		t.Errorf("unread at end %d", ph.Counts["client_unread_bytes_at_end"])
	}
}

// A client too slow to read what an honest relay sends within the grace
// period: the note blames the client (bytes still unread in its sockets).
func TestSubscribeMissingBlamesSlowClient(t *testing.T) {
	o := subHonest
	o.Grace = 300 * time.Millisecond
	o.onDelivery = func() { time.Sleep(40 * time.Millisecond) } // 30 deliveries each: 1.2 s per subscriber
	ph, r := runSubscribe(t, testrelay.Config{Verify: true}, o)
	if r.Stats().DeliveriesDropped != 0 {
		t.Fatalf("relay dropped %d", r.Stats().DeliveriesDropped)
	}
	a := account(t, ph, results.OpDelivery)
	if a.TimedOut == 0 {
		t.Fatalf("slow client got everything in time: %+v", a)
	}
	n := noteWith(ph.Notes, "owed deliveries timed out")
	if !strings.Contains(n, "the client could not keep up") || strings.Contains(n, "the relay dropped them") {
		t.Fatalf("note does not blame the client: %q", n)
	}
	// What the client had not read is no wrong answer of the relay's:
	// timed out (incomplete), not missing (a verification failure).
	if v := ph.Verification; v.Missing != 0 || v.Status() == results.VerificationFailed || ph.Counts["timed_out_unread"] != a.TimedOut {
		t.Errorf("deliveries unread in the client's sockets: missing %d (%s), timed_out_unread %d of %d timed out; notes %q",
			v.Missing, v.Status(), ph.Counts["timed_out_unread"], a.TimedOut, ph.Notes)
	}
	if ph.Counts["client_unread_bytes_at_end"] <= 0 {
		t.Errorf("unread at end %d", ph.Counts["client_unread_bytes_at_end"])
	}
}

func TestParseSourceAddrs(t *testing.T) {
	got, err := ParseSourceAddrs("127.0.0.2-127.0.0.4, 127.0.0.9")
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, a := range got {
		s = append(s, a.String())
	}
	if strings.Join(s, ",") != "127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.9" {
		t.Errorf("got %v", s)
	}
	for _, bad := range []string{"", "x", "127.0.0.9-127.0.0.2", "127.0.0.1-127.0.1.2", "::1"} {
		if _, err := ParseSourceAddrs(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if a := sourceAddrs("ws://127.0.0.1:7777", 10, nil); a != nil {
		t.Errorf("10 connections spread over %v", a)
	}
	if a := sourceAddrs("ws://127.0.0.1:7777", 3*perSourceAddr(), nil); len(a) != 3 || a[2].String() != "127.0.0.3" {
		t.Errorf("3×perSourceAddr connections over %v", a)
	}
	if a := sourceAddrs("ws://10.1.2.3:7777", 3*perSourceAddr(), nil); a != nil {
		t.Errorf("non-loopback relay: %v", a)
	}
}

// 3,000 subscribers spread over two loopback source addresses against the
// embedded relay: every subscription opens, every delivery arrives and is
// verified, and the connections really come from both addresses. 10,000
// with RELAYBENCH_INTEGRATION=1.
func TestSubscribeManySubscribersTwoSourceAddrs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	subs := 3000
	if os.Getenv("RELAYBENCH_INTEGRATION") == "1" {
		subs = 10000
		// The embedded relay runs in this process: each subscription costs
		// two descriptors here. Fit under the limit rather than fail on it.
		if soft, _ := rlimit.Files(); uint64(2*subs+1000) > soft {
			subs = int(soft-1000) / 2
			t.Logf("open-file limit %d: %d subscribers (two descriptors each in one process)", soft, subs)
		}
	}
	url := embeddedURL(t, "memory")
	addrs := []net.IP{net.IPv4(127, 0, 0, 1).To4(), net.IPv4(127, 0, 0, 2).To4()}
	o := SubscribeOptions{Base: Base{Timeout: 20 * time.Second}, Subscribers: subs, Publishers: 1, Events: 5, Size: 100, Filter: FilterKind, SourceAddrs: addrs,
		Grace: 5 * time.Second}
	start := time.Now()
	ph, err := Subscribe(testCtx(t), url, testKeys(t), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d subscribers: %v, %s", subs, time.Since(start).Round(time.Millisecond), noteWith(ph.Notes, "idle subscriptions"))
	wantSplit(t, ph, results.OpSub, split{acc: int64(subs)})
	if v := ph.Verification; v == nil || !v.Passed || ph.Counts["deliveries"] != int64(5*subs) {
		t.Fatalf("deliveries %d of %d: %+v %v", ph.Counts["deliveries"], 5*subs, v, ph.Notes)
	}
	if ph.Params["source_addrs"] != "127.0.0.1,127.0.0.2" {
		t.Errorf("source_addrs param %v", ph.Params["source_addrs"])
	}
	if ph.Counts["client_bytes_per_subscription"] <= 0 {
		t.Errorf("no memory per subscription: %v", ph.Counts)
	}
}

// The connections of a dialMany really come from each source address.
func TestDialManySourceAddrs(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{})
	addrs := []net.IP{net.IPv4(127, 0, 0, 2).To4(), net.IPv4(127, 0, 0, 3).To4()}
	conns, err := dialMany(testCtx(t), r.URL(), 6, wire.Options{}, addrs)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(conns)
	for i, c := range conns {
		host, _, _ := net.SplitHostPort(c.LocalAddr().String())
		if want := addrs[i%2].String(); host != want {
			t.Errorf("connection %d from %s, want %s", i, host, want)
		}
	}
}

func TestMissingConclusion(t *testing.T) {
	base := missingEvidence{missing: 10, cores: 2, busy: 0.2, owedSubs: 4, full: 2, some: 2}
	if c := base.conclusion(); !strings.Contains(c, "the relay dropped them: the client was idle 90% of the time and read every byte the relay sent") {
		t.Errorf("idle client: %s", c)
	}
	busy := base
	busy.busy = 1.9
	if c := busy.conclusion(); !strings.Contains(c, "the client could not keep up: it kept all its cores busy") {
		t.Errorf("busy client: %s", c)
	}
	behind := base
	behind.bl = &backlog{samples: 100, behind: 40, maxConn: 1 << 20}
	if c := behind.conclusion(); !strings.Contains(c, "unread deliveries in 40% of the samples") {
		t.Errorf("client behind during the run: %s", c)
	}
	unread := base
	unread.unreadEnd, unread.unreadConns = 5000, 3
	if c := unread.conclusion(); !strings.Contains(c, "the client could not keep up") || !strings.Contains(c, "4.88 KiB on 3 connections") {
		t.Errorf("unread at the end: %s", c)
	}
	late := base
	late.lastDelivery, late.graceEnd, late.unreadEnd, late.missing = 1000, 1000+int64(50*time.Millisecond), 300, 100000
	late.graceFlag = "the sweep command's --grace"
	if c := late.conclusion(); !strings.Contains(c, "late, not necessarily lost") || !strings.Contains(c, "(a longer wait, the sweep command's --grace, tells late from lost)") {
		t.Errorf("still arriving: %s", c)
	}
}
