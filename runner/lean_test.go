package runner

import (
	"net/http/httptest"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/relay/embedded"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/workload"
)

func heapNow() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func allocated() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// TestQueryModelHeap measures the heap per accepted event of the query
// verification model of a streamed corpus: the events parsed as before (a
// heap copy of every string), as storedModel parses them now, and the
// model's own maps and slices. A measurement, not a check: it runs only
// with RELAYBENCH_LEAN_EVENTS=N (and RELAYBENCH_LEAN_CACHE=DIR to reuse the
// corpus of `relaybench run --events N --anchor 2026-01-01T00:00:00Z`).
func TestQueryModelHeap(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("RELAYBENCH_LEAN_EVENTS"))
	if n == 0 {
		t.Skip("set RELAYBENCH_LEAN_EVENTS to measure")
	}
	dir := os.Getenv("RELAYBENCH_LEAN_CACHE")
	if dir == "" {
		dir = t.TempDir()
	}
	p := corpus.Params{Seed: 1, Events: n, Authors: 200, AvgSize: 1024, Spread: corpus.DefaultSpread, Anchor: 1767225600}.WithDefaults()
	c, err := corpus.Load(t.Context(), p, corpus.Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Streamed() {
		t.Fatal("not streamed")
	}
	pr := &workload.PublishResult{Outcomes: make([]workload.Outcome, c.Len())}
	for i := range pr.Outcomes {
		pr.Outcomes[i] = workload.Accepted
	}
	pubkeys := map[string]string{}
	for _, a := range c.Authors {
		pubkeys[a.PubKey] = a.PubKey
	}

	base := heapNow()
	a0 := allocated()
	old := make([]*nostr.Event, 0, n)
	for i := range n {
		e, err := nostr.ParseEvent(c.RawAt(i))
		if err != nil {
			t.Fatal(err)
		}
		if k, ok := pubkeys[e.PubKey]; ok {
			e.PubKey = k
		}
		if len(e.Tags) == 0 {
			e.Tags = nil
		}
		old = append(old, e)
		if i%4096 == 4095 {
			c.ReleaseBefore(i)
		}
	}
	c.ReleaseBefore(n)
	allocOld := allocated() - a0
	heapOld := heapNow() - base
	runtime.KeepAlive(old)
	old = nil

	base = heapNow()
	a0 = allocated()
	evs := make([]*nostr.Event, 0, n)
	var tags, vals, tagBytes int
	if err := c.Scan(func(i int, e *nostr.Event) error {
		evs = append(evs, e)
		tags += len(e.Tags)
		for _, tg := range e.Tags {
			vals += len(tg)
			for _, v := range tg {
				if len(v) > 1 && v != e.PubKey && pubkeys[v] != v {
					tagBytes += len(v)
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	allocLean := allocated() - a0
	heapLean := heapNow() - base

	base = heapNow()
	a0 = allocated()
	m := verify.NewModel(evs)
	allocModel := allocated() - a0
	heapModel := heapNow() - base
	runtime.KeepAlive(m)

	per := func(b uint64) float64 { return float64(b) / float64(n) }
	t.Logf("%d events (all accepted): heap parse %.0f B/event, lean parse %.0f B/event (x%.1f less), model maps+slices %.0f B/event",
		n, per(heapOld), per(heapLean), float64(heapOld)/float64(heapLean), per(heapModel))
	t.Logf("allocated (live + garbage): heap parse %.0f B/event, lean parse %.0f B/event, model %.0f B/event", per(allocOld), per(allocLean), per(allocModel))
	t.Logf("lean parse, per event: struct %d B (pointer in the list 8 B), id 64 B + unshared tag values %.0f B (one allocation), "+
		"%.2f tags × 24 B + %.2f values × 16 B = %.0f B; outcome 1 B",
		unsafe.Sizeof(nostr.Event{}), float64(tagBytes)/float64(n), float64(tags)/float64(n), float64(vals)/float64(n),
		float64(24*tags+16*vals)/float64(n))
}

// A streamed corpus (events parsed in place from its mapping, contents in
// the string spill) gets the same query verdicts as the same corpus held in
// memory, against the same kind of relay.
func TestStreamedQueryVerdictsSameAsInMemory(t *testing.T) {
	p := corpus.Params{Seed: 3, Events: 1500, Authors: 30, AvgSize: 512, Spread: corpus.DefaultSpread, Anchor: 1767225600}.WithDefaults()
	mem, err := corpus.Load(t.Context(), p, corpus.Options{CacheDir: "off", StreamAbove: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	streamed, err := corpus.Load(t.Context(), p, corpus.Options{CacheDir: t.TempDir(), StreamAbove: -1})
	if err != nil {
		t.Fatal(err)
	}
	if mem.Streamed() || !streamed.Streamed() {
		t.Fatal("corpora not held as asked")
	}
	verdict := func(c *corpus.Corpus) results.Verification {
		r, err := embedded.New(embedded.Options{Store: "native", DataDir: t.TempDir(), Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(r.Handler())
		defer func() { srv.Close(); r.Close() }()
		cfg := Config{
			Publish: workload.PublishOptions{Base: workload.Base{Timeout: 10 * time.Second}, Connections: 4, Mode: workload.ModePipeline, Window: 16},
			Query:   workload.QueryOptions{Base: workload.Base{Seed: 9, Timeout: 10 * time.Second}, Queries: 40, Limit: 50},
		}
		run, err := Run(t.Context(), c, cfg, Target{URL: "ws" + strings.TrimPrefix(srv.URL, "http")})
		if err != nil {
			t.Fatal(err)
		}
		q := run.Phase("query")
		if q == nil || q.Verification == nil {
			t.Fatalf("no query phase: %+v", run.Phases)
		}
		return *q.Verification
	}
	want, got := verdict(mem), verdict(streamed)
	if !want.Passed || want.Checked != 40 || want.Returned == 0 {
		t.Fatalf("in memory: %+v", want)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("streamed: %+v\nin memory: %+v", got, want)
	}
}
