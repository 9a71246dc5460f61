package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiatjaf/eventstore"
	gonostr "github.com/nbd-wtf/go-nostr"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/verify"
)

// idOf sets ev's id from its content (no signature: the store does not check).
func idOf(ev gonostr.Event) *gonostr.Event {
	ev.ID = ev.GetID()
	return &ev
}

func openNative(t *testing.T, dir string) *nativeStore {
	t.Helper()
	s := newNativeStore(dir, MaxLimit, nil)
	if err := s.Init(); err != nil {
		t.Fatal(err)
	}
	return s
}

func queryIDs(t *testing.T, s eventstore.Store, f gonostr.Filter) []string {
	t.Helper()
	ch, err := s.QueryEvents(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for ev := range ch {
		out = append(out, ev.ID)
	}
	return out
}

// TestNativeReplacement checks NIP-01 replacement in every arrival order,
// ties included (the lower id wins), plus duplicates, ephemeral kinds,
// kinds ≥ 40000 (regular), deletion and reopening.
func TestNativeReplacement(t *testing.T) {
	ctx := context.Background()
	pk := strings.Repeat("ab", 32)
	other := strings.Repeat("cd", 32)
	mk := func(kind int, ts int64, tags gonostr.Tags, content string) *gonostr.Event {
		return idOf(gonostr.Event{PubKey: pk, Kind: kind, CreatedAt: gonostr.Timestamp(ts), Tags: tags, Content: content})
	}
	profiles := []*gonostr.Event{mk(0, 100, nil, "a"), mk(0, 100, nil, "b"), mk(0, 99, nil, "c"), mk(0, 100, nil, "d")}
	winner := profiles[0]
	for _, p := range profiles {
		if p.CreatedAt > winner.CreatedAt || p.CreatedAt == winner.CreatedAt && p.ID < winner.ID {
			winner = p
		}
	}
	perms := [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {2, 0, 3, 1}, {1, 3, 0, 2}}
	for _, perm := range perms {
		s := openNative(t, t.TempDir())
		for _, i := range perm {
			if err := s.ReplaceEvent(ctx, profiles[i]); err != nil {
				t.Fatal(err)
			}
		}
		if got := queryIDs(t, s, gonostr.Filter{Kinds: []int{0}}); !slices.Equal(got, []string{winner.ID}) {
			t.Errorf("order %v: kept %v, want %s", perm, got, winner.ID)
		}
		// A copy of the winner is a duplicate; a copy of a loser is accepted
		// and not kept.
		if err := s.SaveEvent(ctx, winner); !errors.Is(err, eventstore.ErrDupEvent) {
			t.Errorf("duplicate of the winner: %v", err)
		}
		for _, p := range profiles {
			if p != winner {
				if err := s.SaveEvent(ctx, p); err != nil {
					t.Errorf("replaced copy: %v", err)
				}
			}
		}
		if got := queryIDs(t, s, gonostr.Filter{Authors: []string{pk}}); !slices.Equal(got, []string{winner.ID}) {
			t.Errorf("after copies: %v", got)
		}
		s.Close()
	}

	dir := t.TempDir()
	s := openNative(t, dir)
	a1 := mk(30023, 10, gonostr.Tags{{"d", "x"}}, "x1")
	a2 := mk(30023, 20, gonostr.Tags{{"d", "x"}}, "x2")
	b1 := mk(30023, 5, gonostr.Tags{{"d", "y"}}, "y1")
	n1 := mk(30023, 7, nil, "no d")
	n2 := mk(30023, 8, gonostr.Tags{{"d", ""}}, "empty d") // same address as n1
	o1 := idOf(gonostr.Event{PubKey: other, Kind: 30023, CreatedAt: 30, Tags: gonostr.Tags{{"d", "x"}}})
	eph := mk(20001, 50, nil, "ephemeral")
	r1 := mk(40000, 1, nil, "regular 1")
	r2 := mk(40000, 1, nil, "regular 2")
	for _, ev := range []*gonostr.Event{a2, a1, b1, n1, n2, o1, eph, r1, r2} {
		if err := s.ReplaceEvent(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	check := func(s *nativeStore, when string) {
		t.Helper()
		want := []string{o1.ID, a2.ID, n2.ID, b1.ID}
		if got := queryIDs(t, s, gonostr.Filter{Kinds: []int{30023}}); !slices.Equal(got, want) {
			t.Errorf("%s: addressable kept %v, want %v", when, got, want)
		}
		if got := queryIDs(t, s, gonostr.Filter{Kinds: []int{20001}}); len(got) != 0 {
			t.Errorf("%s: ephemeral stored: %v", when, got)
		}
		want = []string{r1.ID, r2.ID}
		slices.Sort(want)
		if got := queryIDs(t, s, gonostr.Filter{Kinds: []int{40000}}); !slices.Equal(got, want) {
			t.Errorf("%s: kind 40000 kept %v, want %v (newest first, lower id first)", when, got, want)
		}
	}
	check(s, "stored")
	s.Close()
	s = openNative(t, dir)
	check(s, "reopened")

	if err := s.DeleteEvent(ctx, a2); err != nil {
		t.Fatal(err)
	}
	if got := queryIDs(t, s, gonostr.Filter{IDs: []string{a2.ID}}); len(got) != 0 {
		t.Errorf("deleted event still returned")
	}
	if got := queryIDs(t, s, gonostr.Filter{Tags: gonostr.TagMap{"d": {"x"}}, Authors: []string{pk}}); len(got) != 0 {
		t.Errorf("deleted event still indexed: %v", got)
	}
	// Its address is free again: an older version may now be stored.
	if err := s.ReplaceEvent(ctx, a1); err != nil {
		t.Fatal(err)
	}
	if got := queryIDs(t, s, gonostr.Filter{Authors: []string{pk}, Tags: gonostr.TagMap{"d": {"x"}}}); !slices.Equal(got, []string{a1.ID}) {
		t.Errorf("after delete and re-save: %v", got)
	}
	if n, err := s.CountEvents(ctx, gonostr.Filter{Authors: []string{pk}}); err != nil || n != 5 {
		t.Errorf("count = %d, %v; want 5", n, err)
	}
	s.Close()
	if err := s.SaveEvent(ctx, r1); err == nil {
		t.Error("save after Close: no error")
	}
}

// corpusCase is one corpus the model test publishes.
type corpusCase struct {
	name string
	p    corpus.Params
}

var modelCorpora = []corpusCase{
	// Default shape, scaled down.
	{"default", corpus.Params{Seed: 11, Events: 3000, Authors: 60, AvgSize: 200, Spread: corpus.DefaultSpread, Window: 6 * time.Hour}},
	// Few authors, a ten-minute window: many created_at ties at the limit's
	// cut-off and many replacements per author.
	{"dense", corpus.Params{Seed: 12, Events: 2500, Authors: 6, AvgSize: 120, Spread: corpus.DefaultSpread, Window: 10 * time.Minute}},
	// Many authors, each with few events.
	{"wide", corpus.Params{Seed: 13, Events: 2000, Authors: 700, AvgSize: 100, Spread: corpus.DefaultSpread, Window: 48 * time.Hour}},
}

// TestNativeMatchesModel publishes varied corpora (plus hand-made events:
// replaceable ties, addressable events, kinds ≥ 40000, multi-letter tags,
// duplicates) over several connections at once, then compares thousands of
// query answers, in order, with a brute-force model of NIP-01. It also
// checks the answers after reopening the database.
//
// RELAYBENCH_MODEL_STORES=badger,lmdb,... also runs the upstream stores and
// logs how many answers differ (they are known to be wrong sometimes).
func TestNativeMatchesModel(t *testing.T) {
	stores := []string{"native"}
	if env := os.Getenv("RELAYBENCH_MODEL_STORES"); env != "" {
		stores = strings.Split(env, ",")
	}
	anchor := time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC).Unix()
	for _, cc := range modelCorpora {
		cc := cc
		t.Run(cc.name, func(t *testing.T) {
			p := cc.p
			p.Anchor = anchor
			c, err := corpus.Generate(context.Background(), p.WithDefaults(), corpus.Options{CacheDir: "off"})
			if err != nil {
				t.Fatal(err)
			}
			events := make([]*gonostr.Event, 0, len(c.Raw)+200)
			for _, raw := range c.Raw {
				var ev gonostr.Event
				if err := json.Unmarshal(raw, &ev); err != nil {
					t.Fatal(err)
				}
				events = append(events, &ev)
			}
			events = append(events, craftedEvents(t, anchor, p.Seed)...)
			for _, store := range stores {
				t.Run(store, func(t *testing.T) { modelRun(t, store, events, p.Seed) })
			}
		})
	}
}

var (
	craftOnce sync.Once
	crafted   []gonostr.Event
)

// craftedEvents are signed events the corpus lacks: replaceable and
// addressable ties, kinds ≥ 40000, tags with long names, created_at at the
// corpus's edges. Shifted to each corpus's anchor by re-signing is not
// needed: they are placed relative to a fixed anchor.
func craftedEvents(t *testing.T, anchor, seed int64) []*gonostr.Event {
	craftOnce.Do(func() {
		rng := rand.New(rand.NewPCG(99, 1))
		keys := []string{gonostr.GeneratePrivateKey(), gonostr.GeneratePrivateKey(), gonostr.GeneratePrivateKey()}
		sign := func(sk string, kind int, ts int64, tags gonostr.Tags, content string) {
			pk, _ := gonostr.GetPublicKey(sk)
			ev := gonostr.Event{PubKey: pk, Kind: kind, CreatedAt: gonostr.Timestamp(ts), Tags: tags, Content: content}
			if err := ev.Sign(sk); err != nil {
				t.Fatal(err)
			}
			crafted = append(crafted, ev)
		}
		for i := 0; i < 120; i++ {
			sk := keys[rng.IntN(len(keys))]
			ts := anchor - int64(rng.IntN(5))*60 // few distinct seconds: ties
			switch i % 6 {
			case 0:
				sign(sk, 0, ts, nil, fmt.Sprint("profile ", i))
			case 1:
				sign(sk, 10002, ts, gonostr.Tags{{"r", "wss://r" + fmt.Sprint(i%3)}}, fmt.Sprint("relays ", i))
			case 2:
				sign(sk, 30023, ts, gonostr.Tags{{"d", fmt.Sprint("art", i%4)}, {"t", "bench"}}, fmt.Sprint("article ", i))
			case 3:
				sign(sk, 40001, ts, gonostr.Tags{{"t", "bench"}}, fmt.Sprint("big kind ", i))
			case 4:
				sign(sk, 1, ts, gonostr.Tags{{"emoji", "x", "u"}, {"#e", "weird"}, {"t", "bench"}, {"t", "bench"}}, fmt.Sprint("tags ", i))
			case 5:
				sign(sk, 1, ts-int64(rng.IntN(3*86400)), gonostr.Tags{{"t"}, {"p", strings.Repeat("0", 64)}}, fmt.Sprint("old ", i))
			}
		}
	})
	out := make([]*gonostr.Event, len(crafted))
	for i := range crafted {
		ev := crafted[i]
		out[i] = &ev
	}
	return out
}

// publishAll publishes events over conns connections at once, every event
// once and a few twice, and returns the accepted ones.
func publishAll(t *testing.T, url string, events []*gonostr.Event, conns int, strict bool) []*gonostr.Event {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var mu sync.Mutex
	accepted := map[string]*gonostr.Event{}
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for w := 0; w < conns; w++ {
		c := connect(ctx, t, url)
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			defer c.Close()
			var mine []*gonostr.Event
			for i := w; i < len(events); i += conns {
				mine = append(mine, events[i])
				if i%97 == 0 {
					mine = append(mine, events[i]) // a duplicate
				}
			}
			byID := map[string]*gonostr.Event{}
			const window = 64
			sent, got := 0, 0
			for got < len(mine) {
				for sent < len(mine) && sent-got < window {
					byID[mine[sent].ID] = mine[sent]
					if err := c.write(ctx, "EVENT", mine[sent]); err != nil {
						errs <- err
						return
					}
					sent++
				}
				m, label, err := c.read(ctx)
				if err != nil {
					errs <- err
					return
				}
				if label != "OK" {
					continue
				}
				got++
				var id, reason string
				var ok bool
				json.Unmarshal(m[1], &id)
				json.Unmarshal(m[2], &ok)
				json.Unmarshal(m[3], &reason)
				if ok {
					mu.Lock()
					accepted[id] = byID[id]
					mu.Unlock()
				} else if !strings.HasPrefix(reason, "duplicate:") {
					if strict {
						errs <- fmt.Errorf("event %s refused: %s", id, reason)
						return
					}
					t.Logf("event %s refused: %s", id, reason)
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	out := make([]*gonostr.Event, 0, len(accepted))
	for _, ev := range events {
		if a, ok := accepted[ev.ID]; ok {
			out = append(out, a)
			delete(accepted, ev.ID)
		}
	}
	return out
}

func toModel(t *testing.T, evs []*gonostr.Event) []*nostr.Event {
	out := make([]*nostr.Event, len(evs))
	for i, ev := range evs {
		raw, _ := json.Marshal(ev)
		e, err := nostr.ParseEvent(raw)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = e
	}
	return out
}

// randomFilters draws n filters from the accepted events: every
// combination of ids, authors, kinds, tags, since/until and limits.
func randomFilters(evs []*nostr.Event, n int, seed int64) []nostr.Filter {
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	pick := func() *nostr.Event { return evs[rng.IntN(len(evs))] }
	tagOf := func(names ...string) (string, string, bool) {
		for range 50 {
			e := pick()
			if len(e.Tags) == 0 {
				continue
			}
			tg := e.Tags[rng.IntN(len(e.Tags))]
			if len(tg) >= 2 && (len(names) == 0 || slices.Contains(names, tg[0])) {
				return tg[0], tg[1], true
			}
		}
		return "", "", false
	}
	limits := []int{0, 1, 2, 3, 5, 10, 20, 50, 100, 300, 1000, 5000}
	var out []nostr.Filter
	for len(out) < n {
		var f nostr.Filter
		f.Limit = limits[rng.IntN(len(limits))]
		if rng.IntN(10) == 0 {
			for range 1 + rng.IntN(20) {
				f.IDs = append(f.IDs, pick().ID)
			}
			if rng.IntN(3) == 0 {
				f.IDs = append(f.IDs, strings.Repeat("f", 64))
			}
		}
		if rng.IntN(2) == 0 {
			for range 1 + rng.IntN(5) {
				f.Authors = append(f.Authors, pick().PubKey)
			}
		}
		if rng.IntN(2) == 0 {
			for range 1 + rng.IntN(3) {
				if rng.IntN(6) == 0 {
					f.Kinds = append(f.Kinds, []int{4, 30023, 10002, 40001, 3}[rng.IntN(5)])
				} else {
					f.Kinds = append(f.Kinds, pick().Kind)
				}
			}
		}
		if rng.IntN(3) == 0 {
			for range 1 + rng.IntN(2) {
				name, v, ok := tagOf([]string{"e", "p", "t", "d", "k", "emoji", "#e", "r"}...)
				if !ok {
					continue
				}
				if f.Tags == nil {
					f.Tags = map[string][]string{}
				}
				f.Tags[name] = append(f.Tags[name], v)
				if rng.IntN(3) == 0 {
					if _, v2, ok := tagOf(name); ok {
						f.Tags[name] = append(f.Tags[name], v2)
					}
				}
			}
		}
		switch rng.IntN(5) {
		case 0:
			f.Since = nostr.Int64(pick().CreatedAt)
		case 1:
			f.Until = nostr.Int64(pick().CreatedAt)
		case 2:
			a, b := pick().CreatedAt, pick().CreatedAt
			if a > b {
				a, b = b, a
			}
			f.Since, f.Until = nostr.Int64(a), nostr.Int64(b)
		case 3:
			ts := pick().CreatedAt
			f.Since, f.Until = nostr.Int64(ts), nostr.Int64(ts)
		}
		out = append(out, f)
	}
	return out
}

func toWire(f nostr.Filter) gonostr.Filter {
	g := gonostr.Filter{IDs: f.IDs, Authors: f.Authors, Kinds: f.Kinds, Limit: f.Limit}
	if f.Tags != nil {
		g.Tags = gonostr.TagMap(f.Tags)
	}
	if f.Since != nil {
		g.Since = ptr(gonostr.Timestamp(*f.Since))
	}
	if f.Until != nil {
		g.Until = ptr(gonostr.Timestamp(*f.Until))
	}
	return g
}

// compare checks one answer against the model: exactly the expected events
// in NIP-01 order (newest first, lower id first on ties). It returns a
// description of the difference, or "".
func compare(f *nostr.Filter, got []*gonostr.Event, model *verify.Model) string {
	expected, _ := model.Expected(f, MaxLimit)
	want := make([]string, len(expected))
	for i, e := range expected {
		want[i] = e.ID
	}
	have := make([]string, len(got))
	for i, e := range got {
		have[i] = e.ID
	}
	if slices.Equal(have, want) {
		return ""
	}
	return fmt.Sprintf("got %d events, want %d (first difference at %d)", len(have), len(want), firstDiff(have, want))
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func modelRun(t *testing.T, store string, events []*gonostr.Event, seed int64) {
	dir := t.TempDir()
	r, err := New(Options{Store: store, DataDir: dir, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	srvR, srv := r, httptest.NewServer(r.Handler())
	url := wsURL(srv.URL)
	start := time.Now()
	acc := publishAll(t, url, events, 4, store == "native")
	t.Logf("%s: published %d events (%d accepted) in %v", store, len(events), len(acc), time.Since(start).Round(time.Millisecond))
	model := verify.NewModel(toModel(t, acc))
	filters := randomFilters(model.Live, 1500, seed)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := connect(ctx, t, url)
	bad, failed := 0, 0
	start = time.Now()
	for i := range filters {
		f := &filters[i]
		got, err := c.QuerySync(ctx, toWire(*f))
		if err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
		v := verify.Answer(f, toModel(t, got), 0, model, MaxLimit)
		verify.Finish(&v)
		if !v.Passed {
			failed++
		}
		if d := compare(f, got, model); d != "" {
			bad++
			if (store == "native" || os.Getenv("RELAYBENCH_MODEL_VERBOSE") != "") && bad <= 10 {
				b, _ := json.Marshal(f)
				t.Errorf("filter %s: %s", b, d)
			}
		}
	}
	t.Logf("%s: %d queries in %v: %d answers differ from the model's exact list, %d fail relaybench's verification",
		store, len(filters), time.Since(start).Round(time.Millisecond), bad, failed)
	if store == "native" && failed > 0 {
		t.Errorf("%d answers fail verification", failed)
	}
	c.Close()
	srv.CloseClientConnections()
	srv.Close()
	if err := srvR.Close(); err != nil {
		t.Fatal(err)
	}
	if store != "native" {
		return
	}

	// Reopen the same data directory: everything is still there.
	r, err = New(Options{Store: store, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := 0; i < len(filters); i += 5 {
		f := &filters[i]
		wf := toWire(*f)
		for _, ovw := range r.k.OverwriteFilter {
			ovw(ctx, &wf)
		}
		ch, err := r.query(ctx, wf)
		if err != nil {
			t.Fatal(err)
		}
		var got []*gonostr.Event
		for ev := range ch {
			got = append(got, ev)
		}
		if d := compare(f, got, model); d != "" {
			b, _ := json.Marshal(f)
			t.Errorf("reopened, filter %s: %s", b, d)
		}
		{
			n, err := r.store.(eventstore.Counter).CountEvents(ctx, toWire(*f))
			_, all := model.Expected(f, 0)
			if err != nil || n != int64(len(all)) {
				t.Errorf("count %v: %d, %v; want %d", wf, n, err, len(all))
			}
		}
	}
}

// benchCorpus is the benchmarks' corpus of n events (seed 1, a fixed
// anchor), generated without the cache.
func benchCorpus(b *testing.B, n int) *corpus.Corpus {
	anchor := time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC).Unix()
	p := corpus.Params{Seed: 1, Events: n, Anchor: anchor, Spread: corpus.DefaultSpread}.WithDefaults()
	c, err := corpus.Generate(context.Background(), p, corpus.Options{CacheDir: "off"})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkQueryStores runs the six query shapes of `relaybench run`
// (limit 100) against the native and badger stores holding the same
// 5,000-event corpus, calling the store directly (no WebSocket).
func BenchmarkQueryStores(b *testing.B) {
	c := benchCorpus(b, 5000)
	model := verify.NewModel(c.Events)
	rng := rand.New(rand.NewPCG(5, 5))
	pick := func() *nostr.Event { return model.Live[rng.IntN(len(model.Live))] }
	shapes := map[string]func() gonostr.Filter{
		"kind": func() gonostr.Filter { return gonostr.Filter{Kinds: []int{pick().Kind}, Limit: 100} },
		"time-range": func() gonostr.Filter {
			s := gonostr.Timestamp(pick().CreatedAt - int64(rng.IntN(3600)))
			return gonostr.Filter{Since: &s, Until: ptr(s + 3600), Limit: 100}
		},
		"tag-p": func() gonostr.Filter {
			for {
				if v := pick().TagValue("p"); v != "" {
					return gonostr.Filter{Tags: gonostr.TagMap{"p": {v}}, Limit: 100}
				}
			}
		},
		"tag-t": func() gonostr.Filter {
			for {
				if v := pick().TagValue("t"); v != "" {
					return gonostr.Filter{Tags: gonostr.TagMap{"t": {v}}, Limit: 100}
				}
			}
		},
		"author": func() gonostr.Filter { return gonostr.Filter{Authors: []string{pick().PubKey}, Limit: 100} },
		"complex": func() gonostr.Filter {
			e := pick()
			f := gonostr.Filter{Kinds: []int{e.Kind, 7}, Authors: []string{e.PubKey, pick().PubKey, pick().PubKey}, Limit: 100}
			f.Since, f.Until = ptr(gonostr.Timestamp(e.CreatedAt-6*3600)), ptr(gonostr.Timestamp(e.CreatedAt+6*3600))
			if t := e.TagValue("t"); t != "" {
				f.Tags = gonostr.TagMap{"t": {t}}
			}
			return f
		},
	}
	for _, store := range []string{"native", "badger"} {
		st, err := openStore(store, b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		for _, raw := range c.Raw {
			var ev gonostr.Event
			json.Unmarshal(raw, &ev)
			if gonostr.IsReplaceableKind(ev.Kind) || gonostr.IsAddressableKind(ev.Kind) {
				err = st.ReplaceEvent(ctx, &ev)
			} else {
				err = st.SaveEvent(ctx, &ev)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		for _, shape := range []string{"kind", "time-range", "tag-p", "tag-t", "author", "complex"} {
			b.Run(store+"/"+shape, func(b *testing.B) {
				filters := make([]gonostr.Filter, 200)
				for i := range filters {
					filters[i] = shapes[shape]()
				}
				n := 0
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					ch, err := st.QueryEvents(ctx, filters[i%len(filters)])
					if err != nil {
						b.Fatal(err)
					}
					for range ch {
						n++
					}
				}
				b.ReportMetric(float64(n)/float64(b.N), "events/op")
			})
		}
		st.Close()
	}
}

// BenchmarkSaveStores measures what khatru asks of a store per published
// event (the "was it deleted" query, then the save), from 4 goroutines, on
// the native and badger stores.
func BenchmarkSaveStores(b *testing.B) {
	c := benchCorpus(b, 20000)
	evs := make([]*gonostr.Event, len(c.Raw))
	for i, raw := range c.Raw {
		evs[i] = &gonostr.Event{}
		json.Unmarshal(raw, evs[i])
	}
	for _, store := range []string{"native", "badger"} {
		b.Run(store, func(b *testing.B) {
			if b.N > len(evs) {
				b.Skipf("at most %d events", len(evs))
			}
			st, err := openStore(store, b.TempDir(), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			ctx := context.Background()
			var next sync.Mutex
			var failed atomic.Int64
			i := 0
			var wg sync.WaitGroup
			b.ResetTimer()
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						next.Lock()
						j := i
						i++
						next.Unlock()
						if j >= b.N {
							return
						}
						ev := evs[j]
						ch, _ := st.QueryEvents(ctx, gonostr.Filter{Kinds: []int{5}, Tags: gonostr.TagMap{"#e": {ev.ID}}})
						for range ch {
						}
						var err error
						if gonostr.IsRegularKind(ev.Kind) {
							err = st.SaveEvent(ctx, ev)
						} else {
							err = st.ReplaceEvent(ctx, ev)
						}
						if err != nil {
							failed.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			if n := failed.Load(); n > 0 {
				b.Logf("%s: %d saves failed", store, n)
			}
		})
	}
}

// TestNativeCodec round-trips events through the stored form, odd ones
// included (non-hex keys, invalid UTF-8, empty and one-field tags, negative
// created_at and kind), and refuses truncated data.
func TestNativeCodec(t *testing.T) {
	id := [32]byte{1, 2, 3, 250}
	hexID := fmt.Sprintf("%x", id)
	cases := []gonostr.Event{
		{ID: hexID, PubKey: strings.Repeat("ab", 32), Sig: strings.Repeat("cd", 64), CreatedAt: 1700000000, Kind: 1,
			Tags: gonostr.Tags{{"e", strings.Repeat("0", 64), "wss://x", "root"}, {"t", "bench"}}, Content: "hello"},
		{ID: hexID, PubKey: "NOT-HEX", Sig: "", CreatedAt: -5, Kind: -1, Tags: gonostr.Tags{{}, {"x"}, {"", ""}}, Content: "\xff\xfe invalid utf-8 \x00"},
		{ID: hexID, PubKey: strings.Repeat("AB", 32), Sig: strings.Repeat("z", 128), CreatedAt: 0, Kind: 70000, Content: strings.Repeat("é", 5000)},
	}
	for i, ev := range cases {
		b := encodeEvent(&ev, id)
		got, err := decodeEvent(b)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if len(ev.Tags) == 0 {
			ev.Tags = nil
		}
		if fmt.Sprintf("%#v", *got) != fmt.Sprintf("%#v", ev) {
			t.Errorf("case %d: got\n%#v\nwant\n%#v", i, *got, ev)
		}
		for n := 0; n < len(b); n++ {
			if _, err := decodeEvent(b[:n]); err == nil {
				t.Fatalf("case %d: truncated to %d bytes decoded without error", i, n)
			}
		}
	}
}
