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

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/relay/embedded"
	"github.com/relaybench/relaybench/results"
)

var (
	liveCorpusOnce sync.Once
	liveCorpus     *corpus.Corpus
	liveCorpusErr  error
)

// testKeys returns a small corpus: the live workloads only need its keys.
func testKeys(t testing.TB) *corpus.Corpus {
	t.Helper()
	liveCorpusOnce.Do(func() {
		p := corpus.Params{Seed: 3, Events: 30, Authors: 30, AvgSize: 200, Spread: corpus.DefaultSpread}.WithDefaults()
		liveCorpus, liveCorpusErr = corpus.Generate(context.Background(), p, corpus.Options{CacheDir: "off"})
	})
	if liveCorpusErr != nil {
		t.Fatal(liveCorpusErr)
	}
	return liveCorpus
}

// embeddedRelay starts the real khatru relay (memory store) on 127.0.0.1.
func embeddedRelay(t testing.TB) string {
	t.Helper()
	r, err := embedded.New(embedded.Options{Store: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r.Handler())
	t.Cleanup(func() { srv.Close(); r.Close() })
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// checkLatency asserts a latency distribution is present, positive and
// below a generous bound.
func checkLatency(t *testing.T, name string, h *results.Histogram, want int64) {
	t.Helper()
	if h == nil {
		t.Fatalf("%s latency missing", name)
	}
	if h.Count != want {
		t.Errorf("%s latency: %d samples, want %d", name, h.Count, want)
	}
	if h.Count > 0 && (h.Min <= 0 || h.Max >= int64(20*time.Second)) {
		t.Errorf("%s latency out of bounds: min %d max %d ns", name, h.Min, h.Max)
	}
}

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
			url := embeddedRelay(t)
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

func TestSubscribeMisbehavingDeliveries(t *testing.T) {
	base := SubscribeOptions{Subscribers: 4, Publishers: 1, Channels: 2, Events: 60, Size: 100, Filter: FilterTag, Grace: time.Second}
	t.Run("drop", func(t *testing.T) {
		r := testrelay.New(testrelay.Config{DropDeliveriesEvery: 5})
		defer r.Close()
		ph, err := Subscribe(testCtx(t), r.URL(), testKeys(t), base)
		if err != nil {
			t.Fatal(err)
		}
		dropped := int64(r.Stats().DeliveriesDropped)
		if dropped == 0 || ph.Verification.Missing != dropped || ph.Verification.Passed {
			t.Fatalf("relay dropped %d, missing %d, passed %v", dropped, ph.Verification.Missing, ph.Verification.Passed)
		}
		if ph.Counts["missing"] != dropped {
			t.Errorf("counts missing %d", ph.Counts["missing"])
		}
	})
	t.Run("duplicate", func(t *testing.T) {
		r := testrelay.New(testrelay.Config{DuplicateDeliveriesEvery: 4})
		defer r.Close()
		ph, err := Subscribe(testCtx(t), r.URL(), testKeys(t), base)
		if err != nil {
			t.Fatal(err)
		}
		dup := int64(r.Stats().DeliveriesDuplicated)
		if dup == 0 || ph.Verification.Duplicated != dup || ph.Counts["duplicated"] != dup || ph.Verification.Passed {
			t.Fatalf("relay duplicated %d, reported %d/%d", dup, ph.Verification.Duplicated, ph.Counts["duplicated"])
		}
		if ph.Verification.Missing != 0 {
			t.Errorf("missing %d", ph.Verification.Missing)
		}
	})
	t.Run("delay", func(t *testing.T) {
		const delay = 30 * time.Millisecond
		r := testrelay.New(testrelay.Config{DelayDeliveries: delay})
		defer r.Close()
		o := base
		o.Events = 20
		ph, err := Subscribe(testCtx(t), r.URL(), testKeys(t), o)
		if err != nil {
			t.Fatal(err)
		}
		if !ph.Verification.Passed {
			t.Fatalf("verification %+v", ph.Verification)
		}
		h := ph.Latency["deliver"]
		if h.Count == 0 || h.Min < int64(delay) {
			t.Fatalf("deliver latency min %v with a %v delay", time.Duration(h.Min), delay)
		}
	})
	t.Run("refused", func(t *testing.T) {
		r := testrelay.New(testrelay.Config{RefuseEvery: 3})
		defer r.Close()
		ph, err := Subscribe(testCtx(t), r.URL(), testKeys(t), base)
		if err != nil {
			t.Fatal(err)
		}
		if ph.Counts["refused"] != 20 || ph.Counts["accepted"] != 40 {
			t.Fatalf("counts %v", ph.Counts)
		}
		// Refused events are not expected anywhere.
		if !ph.Verification.Passed || ph.Verification.Expected != ph.Counts["deliveries"] {
			t.Fatalf("verification %+v deliveries %d", ph.Verification, ph.Counts["deliveries"])
		}
	})
}

func TestSubscribePublisherConnectionLost(t *testing.T) {
	// Each connection is cut at its 5th message: publishers die mid-run. The
	// workload must end, count what was never sent or never answered, and
	// still expect (and get) every accepted event delivered.
	r := testrelay.New(testrelay.Config{CloseAfter: 5})
	defer r.Close()
	ph, err := Subscribe(testCtx(t), r.URL(), testKeys(t), SubscribeOptions{Subscribers: 3, Publishers: 2, Channels: 1, Events: 40, Size: 100, Filter: FilterTag, Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c := ph.Counts
	if c["accepted"] == 0 || c["accepted"] >= 40 || c["accepted"]+c["failed"]+c["not_sent"] != 40 {
		t.Fatalf("counts %v", c)
	}
	if len(ph.Errors) == 0 {
		t.Error("lost connections not reported")
	}
	if !ph.Verification.Passed || ph.Verification.Expected != 3*c["accepted"] {
		t.Fatalf("verification %+v", ph.Verification)
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
	var deliveries, expected int64
	var secs, clientCPU, relayCPU float64
	for b.Loop() {
		end := inst.Begin()
		ph, err := Subscribe(ctx, inst.URL, c, fanoutOptions(2000, 64))
		res := end()
		if err != nil {
			b.Fatal(err)
		}
		deliveries += ph.Counts["deliveries"]
		expected += ph.Verification.Expected
		secs += float64(ph.Duration) / 1e9
		clientCPU += ph.Resources.ClientCPUSecs
		relayCPU += res.RelayCPUSecs
	}
	if deliveries != expected {
		b.Errorf("delivered %d of %d expected", deliveries, expected)
	}
	client, relay := clientCPU/secs, relayCPU/secs
	b.ReportMetric(float64(deliveries)/secs, "deliveries/s")
	b.ReportMetric(client, "client-cores")
	b.ReportMetric(relay, "relay-cores")
	b.ReportMetric(clientCPU/float64(deliveries)*1e9, "client-cpu-ns/delivery")
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
	url := embeddedRelay(b)
	c := testKeys(b)
	var deliveries int64
	var secs, cpu float64
	for b.Loop() {
		ph, err := Subscribe(context.Background(), url, c, fanoutOptions(2000, 64))
		if err != nil {
			b.Fatal(err)
		}
		if ph.Counts["deliveries"] != ph.Verification.Expected {
			b.Errorf("delivered %d of %d", ph.Counts["deliveries"], ph.Verification.Expected)
		}
		deliveries += ph.Counts["deliveries"]
		secs += float64(ph.Duration) / 1e9
		cpu += ph.Resources.ClientCPUSecs
	}
	b.ReportMetric(float64(deliveries)/secs, "deliveries/s")
	b.ReportMetric(cpu/float64(deliveries)*1e9, "cpu-ns/delivery")
	b.ReportMetric(cpu/secs, "cores-busy")
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
	r := newFanRelay(b)
	c := testKeys(b)
	var deliveries, expected int64
	var secs, cpu float64
	for b.Loop() {
		ph, err := Subscribe(context.Background(), r.url(), c, fanoutOptions(4000, 256))
		if err != nil {
			b.Fatal(err)
		}
		deliveries += ph.Counts["deliveries"]
		expected += ph.Verification.Expected
		secs += float64(ph.Duration) / 1e9
		cpu += ph.Resources.ClientCPUSecs
	}
	if deliveries != expected {
		b.Errorf("delivered %d of %d expected", deliveries, expected)
	}
	b.ReportMetric(float64(deliveries)/secs, "deliveries/s")
	b.ReportMetric(cpu/float64(deliveries)*1e9, "cpu-ns/delivery")
	b.ReportMetric(cpu/secs, "cores-busy")
}
