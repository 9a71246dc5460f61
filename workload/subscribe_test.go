package workload

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
)

func TestSubscribeEmbeddedComplete(t *testing.T) {
	for _, mode := range []struct {
		name string
		o    SubscribeOptions
	}{
		{"wait-mix", SubscribeOptions{Filter: FilterMix, Overlap: 2}},
		{"pipeline-tag", SubscribeOptions{Filter: FilterTag, Mode: ModePipeline, Window: 16, Overlap: 3}},
		{"open-loop-author", SubscribeOptions{Filter: FilterAuthor, Rate: 2000, Overlap: 2}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			url := embeddedURL(t, "memory")
			o := mode.o
			o.Subscribers, o.Publishers, o.Channels, o.Events, o.Size = 9, 2, 5, 300, 300
			o.Authors = 7
			ph, err := Subscribe(testCtx(t), url, testKeys(t), o)
			if err != nil {
				t.Fatal(err)
			}
			if ph.Counts["accepted"] != 300 {
				t.Fatalf("accepted %d of 300: %v %v", ph.Counts["accepted"], ph.Errors, ph.Notes)
			}
			v := ph.Verification
			if v == nil || !v.Passed || v.Missing != 0 || v.Extra != 0 || v.Duplicated != 0 || v.NotMatching != 0 || v.Invalid != 0 {
				t.Fatalf("verification: %+v", v)
			}
			if v.Expected == 0 || ph.Counts["deliveries"] != v.Expected {
				t.Fatalf("deliveries %d, expected %d", ph.Counts["deliveries"], v.Expected)
			}
			// Overlap > 1 means an event reaches more than one subscriber.
			if ph.Rates["fanout"] <= 1 {
				t.Errorf("fan-out %.2f, want > 1", ph.Rates["fanout"])
			}
			checkLatency(t, "deliver", ph.Latency["deliver"], v.Expected)
			checkLatency(t, "ok", ph.Latency["ok"], 300)
			if ph.Rates["deliveries_per_sec"] <= 0 || ph.Resources == nil || ph.Resources.ClientCPUSecs <= 0 {
				t.Errorf("rates %v resources %+v", ph.Rates, ph.Resources)
			}
			if len(ph.Series) == 0 {
				t.Error("no series")
			}
			wantGroups := 1
			if o.Filter == FilterMix {
				wantGroups = 3
			}
			if len(ph.Groups) != wantGroups {
				t.Fatalf("groups %d, want %d", len(ph.Groups), wantGroups)
			}
			for _, g := range ph.Groups {
				if g.Counts["deliveries"] == 0 || g.Verification == nil || !g.Verification.Passed {
					t.Errorf("group %s: %v %+v", g.Name, g.Counts, g.Verification)
				}
			}
			if o.Rate > 0 && ph.Latency["send_lateness"] == nil {
				t.Error("open loop without lateness")
			}
		})
	}
}

// Deliveries the relay delays by 30 ms: none is missed, and the deliver
// latency includes the delay.
func TestSubscribeDelayedDeliveriesInLatency(t *testing.T) {
	const delay = 30 * time.Millisecond
	o := subHonest
	o.Events, o.Grace = 20, time.Second
	ph, _ := runSubscribe(t, testrelay.Config{DelayDeliveries: delay}, o)
	if !ph.Verification.Passed {
		t.Fatalf("verification %+v", ph.Verification)
	}
	h := ph.Latency["deliver"]
	if h.Count == 0 || h.Min < int64(delay) {
		t.Fatalf("deliver latency min %v with a %v delay", time.Duration(h.Min), delay)
	}
}

// Every third EVENT refused: refused events are not expected anywhere.
func TestSubscribeRefusedEventsNotExpected(t *testing.T) {
	o := subHonest
	o.Grace = time.Second
	ph, _ := runSubscribe(t, testrelay.Config{RefuseEvery: 3}, o)
	if ph.Counts["refused"] != 20 || ph.Counts["accepted"] != 40 {
		t.Fatalf("counts %v", ph.Counts)
	}
	if !ph.Verification.Passed || ph.Verification.Expected != ph.Counts["deliveries"] {
		t.Fatalf("verification %+v deliveries %d", ph.Verification, ph.Counts["deliveries"])
	}
}

func TestEventIDOf(t *testing.T) {
	id := strings.Repeat("ab", 32)
	for _, raw := range []string{
		`{"id":"` + id + `","kind":1}`,
		`{"content":"say \"id\":\"x\"","tags":[["id","y"]], "id" : "` + id + `"}`,
	} {
		if got := string(EventIDOf([]byte(raw))); got != id {
			t.Errorf("%s: got %q", raw, got)
		}
	}
	for _, raw := range []string{`{"kind":1}`, `{"id":"short"}`, `{"id":`} {
		if got := EventIDOf([]byte(raw)); got != nil {
			t.Errorf("%s: got %q", raw, got)
		}
	}
}

// fanoutOptions is the benchmark fan-out: 50 subscribers with a kind
// filter (every event reaches all 50), 2 publishers pipelining.
func fanoutOptions(events, window int) SubscribeOptions {
	return SubscribeOptions{Subscribers: 50, Publishers: 2, Channels: 1, Filter: FilterKind, Events: events, Size: 256,
		Mode: ModePipeline, Window: window}
}

// BenchmarkFanout runs the fan-out against the embedded relay (khatru,
// memory store) in a process of its own ("relaybench relay serve", built
// for the benchmark), so that relay and client CPU are measured apart, and
// says from them which side limited the rate. The client's own ceiling is
// BenchmarkFanoutClient's.
func BenchmarkFanout(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "relaybench")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/relaybench/relaybench/cmd/relaybench").CombinedOutput(); err != nil {
		b.Fatalf("build relaybench: %v\n%s", err, out)
	}
	ctx := context.Background()
	inst, err := harness.Start(ctx, "khatru-memory", harness.StartOptions{BaseDir: dir, SelfBin: bin})
	if err != nil {
		b.Fatal(err)
	}
	defer inst.Stop(context.Background())
	c := testKeys(b)
	var tot fanTotals
	var relayCPU float64
	for b.Loop() {
		end := inst.Begin()
		ph, err := Subscribe(ctx, inst.URL, c, fanoutOptions(2000, 64))
		res := end()
		if err != nil {
			b.Fatal(err)
		}
		tot.add(ph)
		relayCPU += res.RelayCPUSecs
	}
	tot.check(b)
	client, relay := tot.cpu/tot.secs, relayCPU/tot.secs
	b.ReportMetric(float64(tot.deliveries)/tot.secs, "deliveries/s")
	b.ReportMetric(client, "client-cores")
	b.ReportMetric(relay, "relay-cores")
	b.ReportMetric(tot.cpu/float64(tot.deliveries)*1e9, "client-cpu-ns/delivery")
	switch cores := float64(runtime.GOMAXPROCS(0)); {
	case client >= 0.9*cores:
		b.Logf("client-limited: the client kept %.2f of %.0f cores busy", client, cores)
	case relay > client && client+relay >= 0.9*float64(runtime.NumCPU()):
		b.Logf("relay-limited: the machine was saturated (relay %.2f cores, client %.2f of %d) and the relay used %.1f× the client's CPU", relay, client, runtime.NumCPU(), relay/client)
	case relay > client:
		b.Logf("relay-limited: relay %.2f cores, client %.2f of %.0f (client has headroom)", relay, client, cores)
	default:
		b.Logf("neither side saturated: relay %.2f cores, client %.2f", relay, client)
	}
}

// BenchmarkFanoutInProcess is BenchmarkFanout with the embedded relay in
// this process: its CPU figure is relay and client together.
func BenchmarkFanoutInProcess(b *testing.B) {
	url := embeddedURL(b, "memory")
	benchFanout(b, url, fanoutOptions(2000, 64))
}

// fanTotals adds up a fan-out benchmark's phases: the deliveries, those
// expected, the phases' seconds and the client's CPU seconds.
type fanTotals struct {
	deliveries, expected int64
	secs, cpu            float64
}

func (f *fanTotals) add(ph results.Phase) {
	f.deliveries += ph.Counts["deliveries"]
	f.expected += ph.Verification.Expected
	f.secs += float64(ph.Duration) / 1e9
	f.cpu += ph.Resources.ClientCPUSecs
}

// check: every expected delivery came.
func (f *fanTotals) check(b *testing.B) {
	if f.deliveries != f.expected {
		b.Errorf("delivered %d of %d expected", f.deliveries, f.expected)
	}
}

// benchFanout runs the fan-out o against url each iteration and reports
// the deliveries per second and the process's CPU (per delivery, and
// cores busy).
func benchFanout(b *testing.B, url string, o SubscribeOptions) {
	c := testKeys(b)
	var tot fanTotals
	for b.Loop() {
		ph, err := Subscribe(context.Background(), url, c, o)
		if err != nil {
			b.Fatal(err)
		}
		tot.add(ph)
	}
	tot.check(b)
	b.ReportMetric(float64(tot.deliveries)/tot.secs, "deliveries/s")
	b.ReportMetric(tot.cpu/float64(tot.deliveries)*1e9, "cpu-ns/delivery")
	b.ReportMetric(tot.cpu/tot.secs, "cores-busy")
}

// fanRelay is a minimal, fast NIP-01 relay for measuring the client's own
// ceiling: it answers every EVENT with OK true at once and forwards it to
// every open subscription (whatever its filter), answers each REQ with EOSE,
// stores nothing and checks nothing. It frames WebSocket messages itself and
// batches each connection's output in one write, so its cost per delivery
// is about one memory copy.
type fanRelay struct {
	srv  *httptest.Server
	mu   sync.Mutex
	subs []fanSub
	// refuse: subscription id → CLOSED reason; set before the first REQ.
	refuse map[string]string
}

type fanSub struct {
	c      *fanConn
	prefix string // ["EVENT","<subid>",
}

type fanConn struct {
	nc   net.Conn
	mu   sync.Mutex
	cond *sync.Cond
	out  []byte
	dead bool
}

func newFanRelay(t testing.TB) *fanRelay {
	r := &fanRelay{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *fanRelay) url() string { return "ws" + strings.TrimPrefix(r.srv.URL, "http") }

func (r *fanRelay) serve(w http.ResponseWriter, req *http.Request) {
	key := req.Header.Get("Sec-WebSocket-Key")
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	nc, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer nc.Close()
	fmt.Fprintf(brw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", base64.StdEncoding.EncodeToString(h[:]))
	if brw.Flush() != nil {
		return
	}
	c := &fanConn{nc: nc}
	c.cond = sync.NewCond(&c.mu)
	go c.writer()
	defer func() { c.mu.Lock(); c.dead = true; c.cond.Signal(); c.mu.Unlock() }()
	rd := bufio.NewReaderSize(brw.Reader, 256<<10)
	var hdr [14]byte
	var msg []byte
	for {
		if _, err := io.ReadFull(rd, hdr[:2]); err != nil {
			return
		}
		op, n := hdr[0]&0x0f, int(hdr[1]&0x7f)
		switch n {
		case 126:
			if _, err := io.ReadFull(rd, hdr[2:4]); err != nil {
				return
			}
			n = int(binary.BigEndian.Uint16(hdr[2:4]))
		case 127:
			if _, err := io.ReadFull(rd, hdr[2:10]); err != nil {
				return
			}
			n = int(binary.BigEndian.Uint64(hdr[2:10]))
		}
		var mask [4]byte
		if _, err := io.ReadFull(rd, mask[:]); err != nil {
			return
		}
		if cap(msg) < n {
			msg = make([]byte, n)
		}
		msg = msg[:n]
		if _, err := io.ReadFull(rd, msg); err != nil {
			return
		}
		for i := range msg {
			msg[i] ^= mask[i&3]
		}
		if op == 8 {
			return
		}
		if op == 1 {
			r.handle(c, msg)
		}
	}
}

func (r *fanRelay) handle(c *fanConn, m []byte) {
	switch {
	case bytes.HasPrefix(m, []byte(`["EVENT",`)):
		ev := m[len(`["EVENT",`) : len(m)-1]
		id := EventIDOf(ev)
		c.send(`["OK","`, id, `",true,""]`)
		r.mu.Lock()
		subs := r.subs
		r.mu.Unlock()
		for _, s := range subs {
			s.c.send(s.prefix, ev, `]`)
		}
	case bytes.HasPrefix(m, []byte(`["REQ","`)):
		rest := m[len(`["REQ","`):]
		id := string(rest[:bytes.IndexByte(rest, '"')])
		if reason, ok := r.refuse[id]; ok {
			c.send(`["CLOSED","`+id+`","`+reason+`"`, nil, `]`)
			return
		}
		r.mu.Lock()
		r.subs = append(append([]fanSub(nil), r.subs...), fanSub{c, `["EVENT","` + id + `",`})
		r.mu.Unlock()
		c.send(`["EOSE","`+id+`"`, nil, `]`)
	}
}

// send queues one unmasked text frame prefix+body+suffix.
func (c *fanConn) send(prefix string, body []byte, suffix string) {
	n := len(prefix) + len(body) + len(suffix)
	c.mu.Lock()
	switch {
	case n < 126:
		c.out = append(c.out, 0x81, byte(n))
	case n <= 0xffff:
		c.out = append(c.out, 0x81, 126, byte(n>>8), byte(n))
	default:
		c.out = append(c.out, 0x81, 127)
		c.out = binary.BigEndian.AppendUint64(c.out, uint64(n))
	}
	c.out = append(append(append(c.out, prefix...), body...), suffix...)
	c.cond.Signal()
	c.mu.Unlock()
}

func (c *fanConn) writer() {
	var buf []byte
	c.mu.Lock()
	for {
		for len(c.out) == 0 && !c.dead {
			c.cond.Wait()
		}
		if c.dead {
			c.mu.Unlock()
			return
		}
		buf, c.out = c.out, buf[:0]
		c.mu.Unlock()
		if _, err := c.nc.Write(buf); err != nil {
			return
		}
		c.mu.Lock()
	}
}

// BenchmarkFanoutClient measures the client's own ceiling for absorbing
// deliveries: the same 50-subscriber fan-out as BenchmarkFanout, against
// fanRelay, whose work per delivery is one memory copy. cpu-ns/delivery
// covers the whole process, so it bounds the client's cost from above.
func BenchmarkFanoutClient(b *testing.B) {
	benchFanout(b, newFanRelay(b).url(), fanoutOptions(4000, 256))
}

// subHonest is the fan-out of the honesty tests: 4 subscribers on 2
// channels (tag filters, one channel each), 1 publisher, 60 events: every
// event is owed to exactly 2 subscribers, 120 deliveries in all.
var subHonest = SubscribeOptions{Base: Base{Timeout: 5 * time.Second}, Subscribers: 4, Publishers: 1, Channels: 2, Events: 60, Size: 100, Filter: FilterTag,
	Grace: 500 * time.Millisecond}

func runSubscribe(t *testing.T, cfg testrelay.Config, o SubscribeOptions) (results.Phase, *testrelay.Relay) {
	t.Helper()
	r := testrelay.Start(t, cfg)
	ph, err := Subscribe(testCtx(t), r.URL(), testKeys(t), o)
	if err != nil {
		t.Fatal(err)
	}
	return ph, r
}

// checkCredited asserts that only accepted deliveries are credited: the
// deliveries counter, the deliver latency, the per-group counters and
// deliveries/s.
func checkCredited(t *testing.T, ph results.Phase) {
	t.Helper()
	d := account(t, ph, results.OpDelivery)
	if ph.Counts["deliveries"] != d.Accepted {
		t.Errorf("deliveries counter %d, accepted deliveries %d", ph.Counts["deliveries"], d.Accepted)
	}
	if h := ph.Latency["deliver"]; h == nil || h.Count != d.Accepted {
		t.Errorf("deliver latency %+v for %d accepted deliveries", h, d.Accepted)
	}
	var groups int64
	for _, g := range ph.Groups {
		groups += g.Counts["deliveries"]
	}
	if groups != d.Accepted {
		t.Errorf("groups credit %d deliveries, account %d", groups, d.Accepted)
	}
	if secs := float64(ph.Duration) / 1e9; secs > 0 && d.Accepted > 0 {
		if got, want := ph.Rates["deliveries_per_sec"], float64(d.Accepted)/secs; got != want {
			t.Errorf("deliveries/s %.1f, want %.1f (accepted deliveries only)", got, want)
		}
	}
	if h := ph.Latency["ok"]; h == nil || h.Count != account(t, ph, results.OpEvent).Accepted {
		t.Errorf("ok latency %+v", h)
	}
}

// verdict is the judge's reading of the phase: wrong answers, incomplete.
func verdict(ph results.Phase) (wrong, incomplete []string) {
	w, inc, _ := judge.Phase(&ph)
	return w, inc
}

func TestSubscribeHonestRelayBalanced(t *testing.T) {
	ph, _ := runSubscribe(t, testrelay.Config{Verify: true}, subHonest)
	wantSplit(t, ph, results.OpSub, split{acc: 4})
	wantSplit(t, ph, results.OpEvent, split{acc: 60})
	wantSplit(t, ph, results.OpDelivery, split{acc: 120})
	checkCredited(t, ph)
	if v := ph.Verification; !v.Passed || v.Expected != 120 || v.Returned != 120 || v.Missing+v.Invalid+v.Duplicated+v.NotMatching+v.Extra != 0 {
		t.Errorf("verification %+v", v)
	}
	if w, inc := verdict(ph); len(w)+len(inc) > 0 || ph.Aborted != "" {
		t.Errorf("honest relay judged: wrong %v incomplete %v aborted %q", w, inc, ph.Aborted)
	}
	if ph.Params["events"] != 60 || ph.Params["size"] != 100 || ph.Params["authors"] == nil {
		t.Errorf("params %v", ph.Params)
	}
}

// A relay that misdelivers (of subHonest's 120 owed deliveries): what it
// did (its stat) is booked in the delivery account as want, only valid
// deliveries are credited (checkCredited), and the verification names it
// (check).
func TestSubscribeMisdeliveries(t *testing.T) {
	type misdelivery struct {
		name  string
		cfg   testrelay.Config
		stat  func(testrelay.Stats) int
		did   int
		want  split
		check func(t *testing.T, ph results.Phase, v *results.Verification)
	}
	cases := []misdelivery{
		// Every 5th delivery dropped: missing, and both wrong and incomplete.
		{"dropped", testrelay.Config{DropDeliveriesEvery: 5}, func(s testrelay.Stats) int { return s.DeliveriesDropped }, 24, split{acc: 96, to: 24},
			func(t *testing.T, ph results.Phase, v *results.Verification) {
				if v.Passed || v.Missing != 24 || ph.Counts["missing"] != 24 {
					t.Errorf("verification %+v", v)
				}
				if !containsPrefix(ph.Notes, "24 owed deliveries never arrived") {
					t.Errorf("notes %v", ph.Notes)
				}
				if w, inc := verdict(ph); len(w) == 0 || len(inc) == 0 {
					t.Errorf("missing deliveries: wrong %v incomplete %v", w, inc)
				}
			}},
		// Every 11th delivery sent twice: 10 of 120, each followed on its
		// connection by a later owed delivery, so read before the phase
		// ends (the 117th of every 9th, event 58's, was its subscriber's
		// last frame: read after event 59's deliveries had ended the phase
		// now and then). Counted, not credited.
		{"duplicated", testrelay.Config{DuplicateDeliveriesEvery: 11}, func(s testrelay.Stats) int { return s.DeliveriesDuplicated }, 10, split{acc: 120},
			func(t *testing.T, ph results.Phase, v *results.Verification) {
				if v.Passed || v.Duplicated != 10 || v.Missing != 0 || v.Returned != 130 || ph.Counts["duplicated"] != 10 {
					t.Errorf("verification %+v", v)
				}
			}},
		// Every 5th delivery corrupted: the corrupted copy was the only one,
		// so the delivery is also missing.
		{"invalid", testrelay.Config{InvalidDeliveriesEvery: 5}, func(s testrelay.Stats) int { return s.InvalidDeliveries }, 24, split{acc: 96, to: 24},
			func(t *testing.T, ph results.Phase, v *results.Verification) {
				if v.Passed || v.Invalid != 24 || v.Missing != 24 || ph.Counts["invalid"] != 24 {
					t.Errorf("verification %+v", v)
				}
			}},
		// Every 5th event (12 of 60) also sent to the 2 subscribers whose
		// channel it is not on. The phase ends when every owed delivery has
		// arrived: a stray copy of one of the last events may still be on
		// its way then (it is not part of the phase). Those of the earlier
		// events are long in.
		{"wrong-filter", testrelay.Config{WrongFilterDeliveriesEvery: 5}, func(s testrelay.Stats) int { return s.WrongFilterDeliveries }, 24, split{acc: 120},
			func(t *testing.T, ph results.Phase, v *results.Verification) {
				if v.Passed || v.NotMatching < 12 || v.NotMatching > 24 || v.Missing != 0 || ph.Counts["not_matching"] != v.NotMatching {
					t.Errorf("verification %+v (not_matching count %d)", v, ph.Counts["not_matching"])
				}
			}},
		// The honest relay's deliveries in its own bytes (keys sorted, as
		// strfry sends them): each event's first delivery is checked in
		// full, the rest against those bytes (the known-event path); all
		// pass.
		{"sorted-keys", testrelay.Config{SortKeys: true}, func(s testrelay.Stats) int { return s.Deliveries }, 120, split{acc: 120},
			func(t *testing.T, ph results.Phase, v *results.Verification) {
				if !v.Passed || v.Expected != 120 || v.Returned != 120 || v.Missing+v.Invalid+v.Duplicated+v.NotMatching+v.Extra != 0 {
					t.Errorf("verification %+v", v)
				}
			}},
	}
	for _, tc := range cases {
		// and each misdelivery again with the relay's own bytes
		if !tc.cfg.SortKeys {
			sorted := tc
			sorted.name, sorted.cfg.SortKeys = tc.name+"-sorted-keys", true
			cases = append(cases, sorted)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Verify = true
			ph, r := runSubscribe(t, tc.cfg, subHonest)
			if n := tc.stat(r.Stats()); n != tc.did {
				t.Fatalf("the relay did it %d times, want %d", n, tc.did)
			}
			wantSplit(t, ph, results.OpDelivery, tc.want)
			checkCredited(t, ph)
			tc.check(t, ph, ph.Verification)
		})
	}
}

func TestSubscribePublishersConnectionsClosed(t *testing.T) {
	// Every connection is cut at its 5th message: the publisher (one EVENT
	// at a time) after 4 accepted events; the subscribers (one REQ) live on.
	o := subHonest
	o.Publishers = 2
	ph, _ := runSubscribe(t, testrelay.Config{Verify: true, CloseAfter: 5}, o)
	wantSplit(t, ph, results.OpSub, split{acc: 4})
	wantSplit(t, ph, results.OpEvent, split{acc: 8, lost: 2, notRun: 50})
	wantSplit(t, ph, results.OpDelivery, split{acc: 16})
	checkCredited(t, ph)
	// Every accepted event is still expected (and delivered) to its 2
	// subscribers; what was never sent or never answered is counted.
	if v := ph.Verification; !v.Passed || v.Expected != 16 {
		t.Errorf("verification %+v", v)
	}
	if c := ph.Counts; c["accepted"]+c["failed"]+c["not_sent"] != 60 {
		t.Errorf("counts %v: every event sent, lost or not sent", c)
	}
	if len(ph.Errors) == 0 {
		t.Error("lost connections not reported")
	}
	for _, n := range ph.Notes {
		if strings.HasPrefix(n, "all ") {
			t.Errorf("note claims all events went out: %q", n)
		}
	}
	if w, inc := verdict(ph); len(w) > 0 || len(inc) == 0 {
		t.Errorf("wrong %v incomplete %v: want incomplete only", w, inc)
	}
}

func TestSubscribeRelayDiesDeliveriesLost(t *testing.T) {
	// The relay dies at the 11th EVENT: 10 accepted events, owed 20
	// deliveries, each received or lost with the subscribers' connections;
	// the phase does not wait out the grace period for them.
	o := subHonest
	o.Grace = 30 * time.Second
	start := time.Now()
	ph, _ := runSubscribe(t, testrelay.Config{Verify: true, KillAfterEvents: 11}, o)
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("waited %v for deliveries from a dead relay", d)
	}
	wantSplit(t, ph, results.OpEvent, split{acc: 10, lost: 1, notRun: 49})
	d := account(t, ph, results.OpDelivery)
	if d.Requested != 20 || d.Accepted+d.ConnLost != 20 {
		t.Errorf("deliveries %+v", d)
	}
	checkCredited(t, ph)
	if v := ph.Verification; !v.Passed || v.Missing != 0 {
		t.Errorf("a dead relay counted as wrong answers: %+v", v)
	}
}

func TestSubscribeNoEOSEEndsPromptly(t *testing.T) {
	o := subHonest
	o.Timeout = 300 * time.Millisecond
	ph, r := runSubscribe(t, testrelay.Config{Verify: true, NoEOSE: true}, o)
	wantSplit(t, ph, results.OpSub, split{to: 4})
	wantSplit(t, ph, results.OpEvent, split{notRun: 60})
	wantSplit(t, ph, results.OpDelivery, split{})
	if r.Stats().Events != 0 {
		t.Errorf("published %d events with no subscription open", r.Stats().Events)
	}
	if ph.Aborted == "" || ph.Verification.Missing != 0 {
		t.Errorf("aborted %q verification %+v", ph.Aborted, ph.Verification)
	}
	if _, inc := verdict(ph); len(inc) == 0 {
		t.Error("not judged incomplete")
	}
}

func TestSubscribeRelayStallsAborts(t *testing.T) {
	// 4 REQs, then 10 EVENTs are handled; the relay then hangs: the
	// publisher stops after 3 EVENTs without an OK.
	o := subHonest
	o.Timeout = 300 * time.Millisecond
	ph, _ := runSubscribe(t, testrelay.Config{Verify: true, StallAfter: 14}, o)
	wantSplit(t, ph, results.OpEvent, split{acc: 10, to: 3, notRun: 47})
	wantSplit(t, ph, results.OpDelivery, split{acc: 20})
	if ph.Aborted == "" {
		t.Error("no Aborted line")
	}
	if v := ph.Verification; !v.Passed {
		t.Errorf("a stalled relay counted as wrong answers: %+v", v)
	}
}

func TestSubscribeSomeSubscriptionsRefused(t *testing.T) {
	// fanRelay answers CLOSED to subscriber 1's REQ and forwards every
	// event to the 2 others (kind filters: every event is owed to all 3).
	r := newFanRelay(t)
	r.refuse = map[string]string{"live-1": "restricted: not for you"}
	ph, err := Subscribe(testCtx(t), r.url(), testKeys(t), SubscribeOptions{Subscribers: 3, Publishers: 1, Filter: FilterKind, Events: 20, Size: 100, Grace: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	a := wantSplit(t, ph, results.OpSub, split{acc: 2, ref: 1})
	if a.RefusedBy["restricted"] != 1 {
		t.Errorf("refusal class %v", a.RefusedBy)
	}
	wantSplit(t, ph, results.OpEvent, split{acc: 20})
	d := wantSplit(t, ph, results.OpDelivery, split{acc: 40, notRun: 20})
	if d.NotRunBy[whySubNotOpen] != 20 {
		t.Errorf("not run %v", d.NotRunBy)
	}
	checkCredited(t, ph)
	if v := ph.Verification; !v.Passed || v.Expected != 40 {
		t.Errorf("verification %+v", v)
	}
	if !containsPrefix(ph.Notes, "subscription refused: CLOSED: restricted: not for you (1×)") {
		t.Errorf("notes %v", ph.Notes)
	}
}

func TestSubscribeCancelledMidPublish(t *testing.T) {
	o := subHonest
	o.Events, o.Grace, o.Timeout = 200, 30*time.Second, 30*time.Second
	ph := runCancelled(t, testrelay.Config{OKDelay: 20 * time.Millisecond}, 5, func(ctx context.Context, url string) (results.Phase, error) {
		return Subscribe(ctx, url, testKeys(t), o)
	})
	for _, op := range []string{results.OpSub, results.OpEvent, results.OpDelivery} {
		if a := account(t, ph, op); a.TimedOut+a.ConnLost+a.NotRun > 0 {
			t.Errorf("interrupt blamed on the relay: %+v", a)
		}
	}
	if a := account(t, ph, results.OpEvent); a.Cancelled == 0 || a.Accepted < 4 {
		t.Errorf("events %+v", a)
	}
	checkCredited(t, ph)
	if v := ph.Verification; !v.Passed || v.Missing != 0 {
		t.Errorf("interrupt failed verification: %+v", v)
	}
	if w, inc := verdict(ph); len(w)+len(inc) > 0 || ph.Aborted != "" {
		t.Errorf("interrupt judged against the relay: wrong %v incomplete %v aborted %q", w, inc, ph.Aborted)
	}
}
