package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	gonostr "github.com/nbd-wtf/go-nostr"

	"github.com/relaybench/relaybench/internal/secp"
	"github.com/relaybench/relaybench/nostr"
)

// fixed anchor so tests do not depend on the hour they run in.
const anchor = 1_760_000_000

func testParams(events int) Params {
	return Params{Seed: 7, Events: events, Authors: 40, AvgSize: 1024, Spread: DefaultSpread,
		Window: 6 * time.Hour, Anchor: anchor}
}

func gen(t testing.TB, p Params, o Options) *Corpus {
	t.Helper()
	c, err := Generate(context.Background(), p, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// counting wraps a signer and counts signatures.
type counting struct {
	secp.Signer
	n atomic.Int64
}

func (c *counting) SignKey(k *secp.Key, msg, aux *[32]byte) ([64]byte, error) {
	c.n.Add(1)
	return c.Signer.SignKey(k, msg, aux)
}

func (c *counting) Sign(sk, msg, aux *[32]byte) ([64]byte, error) {
	c.n.Add(1)
	return c.Signer.Sign(sk, msg, aux)
}

func TestDeterminism(t *testing.T) {
	// 1,500 events: past repostLag batches, so reposts embed signed notes.
	p := testParams(1500)
	a := gen(t, p, Options{Workers: 1})
	b := gen(t, p, Options{Workers: 3})
	if a.Key != b.Key || len(a.Raw) != len(b.Raw) {
		t.Fatal("two generations differ in key or size")
	}
	for i := range a.Raw {
		if !bytes.Equal(a.Raw[i], b.Raw[i]) {
			t.Fatalf("event %d differs between two generations:\n%s\n%s", i, a.Raw[i], b.Raw[i])
		}
	}
	// Both backends give the same corpus, signatures included.
	if lib, err := secp.Libsecp256k1(); err == nil {
		for _, s := range []secp.Signer{secp.Btcec(), lib} {
			c := gen(t, p, Options{Signer: s})
			for i := range a.Raw {
				if !bytes.Equal(a.Raw[i], c.Raw[i]) {
					t.Fatalf("%s: event %d differs", s.Name(), i)
				}
			}
		}
	}
	q := p
	q.Seed++
	d := gen(t, q, Options{})
	if d.Key == a.Key || bytes.Equal(d.Raw[0], a.Raw[0]) || d.Authors[0].PubKey == a.Authors[0].PubKey {
		t.Error("a different seed gives the same corpus")
	}
}

// compact reports whether JSON b has no whitespace outside strings:
// compacting it changes nothing.
func compact(b []byte) bool {
	var c bytes.Buffer
	return json.Compact(&c, b) == nil && bytes.Equal(c.Bytes(), b)
}

func TestEventsValid(t *testing.T) {
	p := testParams(2000)
	c := gen(t, p, Options{})
	if len(c.Events) != 2000 || len(c.Raw) != 2000 || len(c.Authors) != 40 {
		t.Fatalf("got %d events, %d raw, %d authors", len(c.Events), len(c.Raw), len(c.Authors))
	}
	authors := map[string]bool{}
	for _, a := range c.Authors {
		authors[a.PubKey] = true
	}
	vocab := map[string]bool{}
	for _, h := range hashtags {
		vocab[h] = true
	}
	ids := map[string]int{}
	kinds := map[int]int{}
	var content, raw int64
	var notes, tagged, reposts, escapes int
	dtags := map[string]bool{}
	lastReplaceable := map[string]int64{}
	now := time.Now().Unix()
	for i, r := range c.Raw {
		var ev gonostr.Event
		if err := ev.UnmarshalJSON(r); err != nil {
			t.Fatalf("event %d: go-nostr cannot parse %s: %v", i, r, err)
		}
		if !ev.CheckID() {
			t.Fatalf("event %d: go-nostr says the id is wrong: %s", i, r)
		}
		if ok, err := ev.CheckSignature(); !ok || err != nil {
			t.Fatalf("event %d: go-nostr says the signature is invalid (%v)", i, err)
		}
		e := c.Events[i]
		if ev.ID != e.ID || ev.Content != e.Content || ev.PubKey != e.PubKey || int64(ev.CreatedAt) != e.CreatedAt ||
			ev.Kind != e.Kind || ev.Sig != e.Sig || len(ev.Tags) != len(e.Tags) {
			t.Fatalf("event %d: Raw and Events disagree", i)
		}
		if !bytes.Equal(e.AppendJSON(nil), r) || !compact(r) {
			t.Fatalf("event %d: raw is not the compact AppendJSON form: %s", i, r)
		}
		if !utf8.ValidString(e.Content) {
			t.Fatalf("event %d: content is not valid UTF-8", i)
		}
		if !authors[e.PubKey] {
			t.Fatalf("event %d: signed by a non-author", i)
		}
		if e.CreatedAt < p.windowStart() || e.CreatedAt > p.Anchor || e.CreatedAt > now {
			t.Fatalf("event %d: created_at %d outside [%d, %d]", i, e.CreatedAt, p.windowStart(), p.Anchor)
		}
		kinds[e.Kind]++
		content += int64(len(e.Content))
		raw += int64(len(r))
		if strings.ContainsAny(e.Content, "\"\\\n") {
			escapes++
		}
		for _, tg := range e.Tags {
			switch tg[0] {
			case "p":
				if !authors[tg[1]] {
					t.Fatalf("event %d: p tag %s is not an author", i, tg[1])
				}
			case "e":
				if j, ok := ids[tg[1]]; !ok || j >= i {
					t.Fatalf("event %d: e tag %s is not an earlier event", i, tg[1])
				}
			case "t":
				if !vocab[tg[1]] {
					t.Fatalf("event %d: t tag %q not in the vocabulary", i, tg[1])
				}
			case "d":
				if dtags[tg[1]] {
					t.Fatalf("event %d: duplicate d tag %q", i, tg[1])
				}
				dtags[tg[1]] = true
			}
		}
		switch e.Kind {
		case 1:
			notes++
			if e.TagValue("t") != "" {
				tagged++
			}
		case 0:
			if !strings.HasPrefix(e.Content, `{"name":`) || !json.Valid([]byte(e.Content)) {
				t.Fatalf("event %d: kind-0 content is not profile JSON: %s", i, e.Content)
			}
		case 3:
			if len(e.Tags) == 0 {
				t.Fatalf("event %d: contact list without p tags", i)
			}
		case 6:
			if e.Content != "" {
				var inner gonostr.Event
				if err := inner.UnmarshalJSON([]byte(e.Content)); err != nil || inner.ID != e.TagValue("e") {
					t.Fatalf("event %d: repost content is not the reposted event (%v)", i, err)
				}
				if ok, _ := inner.CheckSignature(); !ok {
					t.Fatalf("event %d: reposted event has a bad signature", i)
				}
				reposts++
			}
		case 7:
			if e.TagValue("e") == "" || e.TagValue("p") == "" {
				t.Fatalf("event %d: reaction without e and p tags", i)
			}
		case 30023:
			if e.TagValue("d") == "" || e.TagValue("title") == "" || e.TagValue("published_at") == "" {
				t.Fatalf("event %d: article lacks d, title or published_at", i)
			}
		}
		if k := replaceKey(e); k != "" {
			if last, ok := lastReplaceable[k]; ok && e.CreatedAt <= last {
				t.Fatalf("event %d: replaceable event not newer than the one it replaces", i)
			}
			lastReplaceable[k] = e.CreatedAt
		}
		ids[e.ID] = i
	}
	avg := float64(content) / float64(len(c.Events))
	if avg < 0.85*float64(p.AvgSize) || avg > 1.15*float64(p.AvgSize) {
		t.Errorf("average content %.0f bytes, want %d ±15%%", avg, p.AvgSize)
	}
	if raw != c.Bytes {
		t.Errorf("Bytes = %d, want %d", c.Bytes, raw)
	}
	for _, k := range []int{0, 1, 3, 6, 7, 30023} {
		if kinds[k] == 0 {
			t.Errorf("no events of kind %d (%v)", k, kinds)
		}
	}
	if kinds[1] < len(c.Events)*6/10 {
		t.Errorf("kind 1 is %d of %d events, want most", kinds[1], len(c.Events))
	}
	if tagged < notes*3/10 {
		t.Errorf("only %d of %d notes have t tags", tagged, notes)
	}
	if reposts == 0 {
		t.Error("no repost embeds the reposted event")
	}
	if escapes < len(c.Events)/10 {
		t.Errorf("only %d events need JSON escaping in content", escapes)
	}
	// Replaced marks all but the newest kind-0 of each author.
	rep := c.Replaced()
	live := map[string]bool{}
	for i, e := range c.Events {
		if k := replaceKey(e); k != "" && !rep[i] {
			if live[k] {
				t.Fatalf("two live events for %s", k)
			}
			live[k] = true
		} else if k == "" && rep[i] {
			t.Fatalf("regular event %d marked replaced", i)
		}
	}
	t.Logf("kinds %v, avg content %.0f B, avg wire %d B, %d/%d notes tagged, %d reposts with content, signer %s, %s",
		kinds, avg, c.Bytes/int64(len(c.Raw)), tagged, notes, reposts, c.Signer, c.SignDuration)
}

func TestAverageSizes(t *testing.T) {
	for _, size := range []int{200, 4096} {
		p := testParams(2000)
		p.AvgSize = size
		c := gen(t, p, Options{})
		var n int64
		for _, e := range c.Events {
			n += int64(len(e.Content))
		}
		avg := float64(n) / float64(len(c.Events))
		if avg < 0.85*float64(size) || avg > 1.15*float64(size) {
			t.Errorf("AvgSize %d: average content %.0f bytes", size, avg)
		}
	}
}

func TestExactSize(t *testing.T) {
	for _, size := range []int{1, 5, 64, 1000, 16384} {
		p := testParams(300)
		p.AvgSize, p.Spread = size, 0
		c := gen(t, p, Options{})
		for i, e := range c.Events {
			if len(e.Content) != size || e.Kind != 1 || !utf8.ValidString(e.Content) {
				t.Fatalf("size %d, event %d: kind %d, %d bytes of content", size, i, e.Kind, len(e.Content))
			}
		}
	}
}

func TestContent(t *testing.T) {
	rng := NewRand(1, 2)
	for size := range 400 {
		s := Content(rng, size)
		if len(s) != size || !utf8.ValidString(s) {
			t.Fatalf("Content(%d) gave %d bytes, valid UTF-8 %v: %q", size, len(s), utf8.ValidString(s), s)
		}
	}
	big := Content(rng, 100_000)
	if len(big) != 100_000 || !utf8.ValidString(big) {
		t.Fatal("large content wrong")
	}
	// The mix is there: 4-byte emoji, CJK, RTL, accents, quotes, newlines.
	for _, want := range []string{"🤙", "日本語", "مرحبا", "שלום", "é", "\"", "\n", "\\"} {
		if !strings.Contains(big, want) {
			t.Errorf("100 KB of content never contains %q", want)
		}
	}
	if Content(NewRand(1, 2), 500) != Content(NewRand(1, 2), 500) {
		t.Error("Content is not deterministic")
	}
}

func TestValidate(t *testing.T) {
	good := testParams(10)
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(*Params){
		"events":   func(p *Params) { p.Events = 0 },
		"authors":  func(p *Params) { p.Authors = -1 },
		"avg size": func(p *Params) { p.AvgSize = MaxAvgSize + 1 },
		"spread":   func(p *Params) { p.Spread = -0.5 },
		"window":   func(p *Params) { p.Window = time.Millisecond },
		"future":   func(p *Params) { p.Anchor = time.Now().Unix() + 3600 },
		"1970":     func(p *Params) { p.Anchor = 100 },
	}
	for field, mutate := range cases {
		p := good
		mutate(&p)
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), field) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: Validate() = %v", field, err)
		}
	}
	d := Params{}.WithDefaults()
	if d.Events != DefaultEvents || d.Authors != DefaultAuthors || d.AvgSize != DefaultAvgSize ||
		d.Window != DefaultWindow || d.Anchor%3600 != 0 || d.Anchor > time.Now().Unix() {
		t.Errorf("bad defaults %+v", d)
	}
	if _, err := Generate(context.Background(), Params{Events: -3}, Options{}); err == nil {
		t.Error("Generate accepts invalid params")
	}
}

func TestCache(t *testing.T) {
	dir := t.TempDir()
	p := testParams(700)
	cnt := &counting{Signer: secp.Default()}
	o := Options{CacheDir: dir, Signer: cnt}
	first, err := Load(context.Background(), p, o)
	if err != nil {
		t.Fatal(err)
	}
	if first.Cached || cnt.n.Load() != 700 || first.CacheNote != "" {
		t.Fatalf("first load: cached %v, %d signatures, note %q", first.Cached, cnt.n.Load(), first.CacheNote)
	}
	path := CachePath(dir, first.Key)
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	same := func(c *Corpus) {
		t.Helper()
		if !reflect.DeepEqual(c.Events, first.Events) || !reflect.DeepEqual(c.Raw, first.Raw) ||
			!reflect.DeepEqual(c.Authors, first.Authors) || c.Bytes != first.Bytes || c.Key != first.Key {
			t.Fatal("reloaded corpus differs")
		}
	}

	cnt.n.Store(0)
	var progressed int
	o.Progress = func(done, total int) { progressed = done }
	hit, err := Load(context.Background(), p, o)
	if err != nil {
		t.Fatal(err)
	}
	if !hit.Cached || cnt.n.Load() != 0 || hit.SignDuration != 0 || hit.Signer != first.Signer {
		t.Fatalf("cache hit: cached %v, %d signatures, signer %q", hit.Cached, cnt.n.Load(), hit.Signer)
	}
	if progressed != 700 {
		t.Errorf("progress on a cache hit reached %d", progressed)
	}
	same(hit)

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string][]byte{
		"flipped byte": append(append([]byte{}, data[:len(data)/2]...), append([]byte{data[len(data)/2] ^ 0x20}, data[len(data)/2+1:]...)...),
		"truncated":    data[:len(data)-100],
		"empty":        {},
		"other key":    append([]byte(strings.Replace(string(data[:80]), first.Key, strings.Repeat("0", 32), 1)), data[80:]...),
	} {
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		cnt.n.Store(0)
		c, err := Load(context.Background(), p, o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.Cached || cnt.n.Load() != 700 || !strings.Contains(c.CacheNote, "regenerated") {
			t.Fatalf("%s: cached %v, %d signatures, note %q", name, c.Cached, cnt.n.Load(), c.CacheNote)
		}
		same(c)
		// the rewritten file is good again
		if c, err := Load(context.Background(), p, o); err != nil || !c.Cached {
			t.Fatalf("%s: cache not rewritten (%v)", name, err)
		}
	}

	// Other params use another file; "off" never writes.
	off := t.TempDir()
	if _, err := Load(context.Background(), p, Options{CacheDir: "off"}); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(off); len(ents) != 0 {
		t.Error("cache off wrote files")
	}
	q := p
	q.AvgSize = 512
	if q.Key() == p.Key() {
		t.Error("different params, same key")
	}
	// An unwritable cache directory is reported, not fatal.
	ro := dir + "/file"
	os.WriteFile(ro, nil, 0o644)
	c, err := Load(context.Background(), p, Options{CacheDir: ro})
	if err != nil || c.CacheNote == "" {
		t.Errorf("unwritable cache: err %v, note %q", err, c.CacheNote)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("cache dir has %d entries (temp files left?)", len(entries))
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := testParams(50_000)
	start := time.Now()
	_, err := Generate(ctx, p, Options{Signer: secp.Btcec(), Progress: func(done, total int) {
		if done >= 3*batchSize {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// 50,000 btcec signatures take ~3 s per core; stopping must be far quicker.
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("cancellation took %s", d)
	}
	if _, err := Load(ctx, p, Options{CacheDir: t.TempDir()}); !errors.Is(err, context.Canceled) {
		t.Errorf("Load with a cancelled context: %v", err)
	}
	if err := SignEvents(ctx, []*nostr.Event{{Kind: 1}}, []*Author{{Secret: [32]byte{1}}}, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("SignEvents with a cancelled context: %v", err)
	}
}

func TestSignEvents(t *testing.T) {
	c := gen(t, testParams(64), Options{})
	rng := NewRand(3, 0)
	var evs []*nostr.Event
	var keys []*Author
	for i := range 300 {
		evs = append(evs, &nostr.Event{CreatedAt: anchor + int64(i), Kind: 1,
			Tags: []nostr.Tag{{"t", "nostr"}}, Content: Content(rng, 50+i)})
		keys = append(keys, c.Author(i))
	}
	var last int
	if err := SignEvents(context.Background(), evs, keys, Options{Progress: func(d, _ int) { last = d }}); err != nil {
		t.Fatal(err)
	}
	if last != 300 {
		t.Errorf("progress reached %d", last)
	}
	for i, e := range evs {
		if e.PubKey != c.Author(i).PubKey {
			t.Fatalf("event %d: pubkey %s, want %s", i, e.PubKey, c.Author(i).PubKey)
		}
		var ev gonostr.Event
		if err := ev.UnmarshalJSON(e.AppendJSON(nil)); err != nil {
			t.Fatal(err)
		}
		if ok, err := ev.CheckSignature(); !ev.CheckID() || !ok {
			t.Fatalf("event %d: id or signature invalid (%v)", i, err)
		}
	}
	if c.Author(-1) != &c.Authors[len(c.Authors)-1] || c.Author(len(c.Authors)) != &c.Authors[0] {
		t.Error("Author does not wrap around")
	}
	if err := SignEvents(context.Background(), evs, keys[:1], Options{}); err == nil {
		t.Error("SignEvents accepts mismatched lengths")
	}
	if err := SignEvents(context.Background(), evs[:1], []*Author{{}}, Options{}); err == nil {
		t.Error("SignEvents accepts a zero secret key")
	}
}

func TestFewAuthors(t *testing.T) {
	for _, n := range []int{1, 2} {
		p := testParams(300)
		p.Authors = n
		c := gen(t, p, Options{})
		for i, e := range c.Events {
			if e.Kind == 3 {
				for _, tg := range e.Tags {
					if tg[1] == e.PubKey {
						t.Fatalf("authors=%d: event %d follows itself", n, i)
					}
				}
			}
		}
	}
}

// BenchmarkGenerate measures generation and signing of 1 KB events on all
// cores, with the default signer.
func BenchmarkGenerate(b *testing.B) {
	p := testParams(20_000)
	p.Authors = 200
	var events int
	start, cpu0 := time.Now(), cpuTime()
	for b.Loop() {
		c, err := Generate(context.Background(), p, Options{})
		if err != nil {
			b.Fatal(err)
		}
		events += len(c.Events)
		b.SetBytes(c.Bytes)
	}
	b.ReportMetric(float64(events)/time.Since(start).Seconds(), "events/s")
	// CPU per event tells what an idle machine would do when this one is
	// shared: events/s ≈ cores / cpu-µs/event.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(events), "cpu-µs/event")
}

// BenchmarkLoadCache measures reading a cached corpus of 1 KB events.
func BenchmarkLoadCache(b *testing.B) {
	p := testParams(20_000)
	dir := b.TempDir()
	if _, err := Load(context.Background(), p, Options{CacheDir: dir}); err != nil {
		b.Fatal(err)
	}
	var events int
	start := time.Now()
	for b.Loop() {
		c, err := Load(context.Background(), p, Options{CacheDir: dir})
		if err != nil || !c.Cached {
			b.Fatal("not cached", err)
		}
		events += len(c.Events)
	}
	b.ReportMetric(float64(events)/time.Since(start).Seconds(), "events/s")
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
