package embedded

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	gonostr "github.com/nbd-wtf/go-nostr"

	"github.com/relaybench/relaybench/nip11"
)

func signed(t *testing.T, sk string, createdAt int64, kind int, tags gonostr.Tags, content string) gonostr.Event {
	t.Helper()
	pk, err := gonostr.GetPublicKey(sk)
	if err != nil {
		t.Fatal(err)
	}
	ev := gonostr.Event{PubKey: pk, CreatedAt: gonostr.Timestamp(createdAt), Kind: kind, Tags: tags, Content: content}
	if err := ev.Sign(sk); err != nil {
		t.Fatal(err)
	}
	return ev
}

func ids(evs []*gonostr.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	slices.Sort(out)
	return out
}

func want(evs ...gonostr.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	slices.Sort(out)
	return out
}

func startRelay(t *testing.T, store string) (*Relay, *httptest.Server) {
	t.Helper()
	r, err := New(Options{Store: store, DataDir: t.TempDir(), Version: "test-1"})
	if err != nil {
		t.Fatalf("New(%s): %v", store, err)
	}
	srv := httptest.NewServer(r.Handler())
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r, srv
}

// dialRelay starts a relay on store and connects to it: the relay, its
// ws:// URL, a context that ends with the test (a hang guard) and the
// connection, closed when the test ends.
func dialRelay(t *testing.T, store string) (*Relay, string, context.Context, *wsClient) {
	t.Helper()
	r, srv := startRelay(t, store)
	ctx := conformCtx(t)
	url := wsURL(srv.URL)
	c := connect(ctx, t, url)
	t.Cleanup(c.Close)
	return r, url, ctx, c
}

// TestStores runs the same publish/query table against every store.
func TestStores(t *testing.T) {
	for _, store := range Stores {
		t.Run(store, func(t *testing.T) {
			_, url, ctx, c := dialRelay(t, store)

			skA, skB := gonostr.GeneratePrivateKey(), gonostr.GeneratePrivateKey()
			now := time.Now().Unix()
			a1 := signed(t, skA, now-30, 1, gonostr.Tags{{"t", "bench"}}, "first")
			a2 := signed(t, skA, now-20, 1, gonostr.Tags{{"t", "other"}}, "second")
			a3 := signed(t, skA, now-10, 30023, gonostr.Tags{{"d", "x"}, {"t", "bench"}}, "third")
			b1 := signed(t, skB, now-5, 7, gonostr.Tags{{"t", "bench"}}, "+")
			for _, ev := range []gonostr.Event{a1, a2, a3, b1} {
				if err := c.Publish(ctx, ev); err != nil {
					t.Fatalf("publish %s: %v", ev.Content, err)
				}
			}

			cases := []struct {
				name   string
				filter gonostr.Filter
				want   []string
			}{
				{"by id", gonostr.Filter{IDs: []string{a2.ID}}, want(a2)},
				{"by two ids", gonostr.Filter{IDs: []string{a1.ID, b1.ID}}, want(a1, b1)},
				{"by author", gonostr.Filter{Authors: []string{a1.PubKey}}, want(a1, a2, a3)},
				{"by kind", gonostr.Filter{Kinds: []int{1}}, want(a1, a2)},
				{"by author and kind", gonostr.Filter{Authors: []string{b1.PubKey}, Kinds: []int{7}}, want(b1)},
				{"by #t", gonostr.Filter{Tags: gonostr.TagMap{"t": {"bench"}}}, want(a1, a3, b1)},
				{"limit keeps newest", gonostr.Filter{Authors: []string{a1.PubKey}, Limit: 2}, want(a2, a3)},
				{"since", gonostr.Filter{Since: ptr(gonostr.Timestamp(now - 15))}, want(a3, b1)},
				{"no match", gonostr.Filter{Kinds: []int{4}}, want()},
			}
			for _, tc := range cases {
				got, err := c.QuerySync(ctx, tc.filter)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if g := ids(got); !slices.Equal(g, tc.want) {
					t.Errorf("%s: got %v, want %v", tc.name, g, tc.want)
				}
			}

			// NIP-01's example: ["OK", id, true, "duplicate: already have this event"].
			if ok, reason, err := c.PublishOK(ctx, a1); err != nil || !ok || !strings.HasPrefix(reason, "duplicate:") {
				t.Errorf("duplicate publish: got OK %v %q (%v), want OK true \"duplicate: …\"", ok, reason, err)
			}
			if got, err := c.QuerySync(ctx, gonostr.Filter{Authors: []string{a1.PubKey}, Kinds: []int{1}}); err != nil {
				t.Fatal(err)
			} else if g := ids(got); !slices.Equal(g, want(a1, a2)) {
				t.Errorf("after duplicate: got %v, want each event once", g)
			}
			bad := signed(t, skA, now, 1, nil, "tampered")
			bad.Sig = strings.Repeat("0", 128)
			if err := c.Publish(ctx, bad); err == nil || !strings.Contains(err.Error(), "invalid:") {
				t.Errorf("bad signature: got %v, want an invalid: refusal", err)
			}
			badID := signed(t, skA, now, 1, nil, "x")
			badID.Content = "changed after signing"
			if err := c.Publish(ctx, badID); err == nil || !strings.Contains(err.Error(), "invalid:") {
				t.Errorf("bad id: got %v, want an invalid: refusal", err)
			}

			info := fetchInfo(t, url)
			if info.Limitation.MaxLimit != MaxLimit {
				t.Errorf("NIP-11 max_limit = %d, want %d", info.Limitation.MaxLimit, MaxLimit)
			}
			if wantSW := "khatru v0.19.1, " + store + " store, embedded in relaybench"; info.Software != wantSW {
				t.Errorf("NIP-11 software = %q, want %q", info.Software, wantSW)
			}
			if info.Version != "test-1" {
				t.Errorf("NIP-11 version = %q", info.Version)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// wsClient is a minimal NIP-01 client for these tests (go-nostr's client
// has data races of its own when closed, which -race would report).
type wsClient struct {
	ws   *websocket.Conn
	nsub int
}

func connect(ctx context.Context, t *testing.T, url string) *wsClient {
	t.Helper()
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	ws.SetReadLimit(1 << 22)
	return &wsClient{ws: ws}
}

func (c *wsClient) Close() { c.ws.CloseNow() }

func (c *wsClient) write(ctx context.Context, v ...any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.ws.Write(ctx, websocket.MessageText, b)
}

func (c *wsClient) read(ctx context.Context) ([]json.RawMessage, string, error) {
	_, b, err := c.ws.Read(ctx)
	if err != nil {
		return nil, "", err
	}
	var m []json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || len(m) == 0 {
		return nil, "", fmt.Errorf("malformed frame %q", b)
	}
	var label string
	json.Unmarshal(m[0], &label)
	return m, label, nil
}

// Publish sends ev and waits for its OK; OK false becomes an error
// carrying the reason.
func (c *wsClient) Publish(ctx context.Context, ev gonostr.Event) error {
	ok, reason, err := c.PublishOK(ctx, ev)
	if err == nil && !ok {
		err = fmt.Errorf("refused: %s", reason)
	}
	return err
}

// PublishOK sends ev and returns its OK answer (other messages are skipped).
func (c *wsClient) PublishOK(ctx context.Context, ev gonostr.Event) (bool, string, error) {
	if err := c.write(ctx, "EVENT", ev); err != nil {
		return false, "", err
	}
	for {
		m, label, err := c.read(ctx)
		if err != nil {
			return false, "", err
		}
		if label != "OK" || len(m) < 4 {
			continue
		}
		var id, reason string
		var ok bool
		json.Unmarshal(m[1], &id)
		json.Unmarshal(m[2], &ok)
		json.Unmarshal(m[3], &reason)
		if id == ev.ID {
			return ok, reason, nil
		}
	}
}

// Subscribe sends a REQ and returns the stored events up to EOSE and the
// subscription id; the subscription stays open.
func (c *wsClient) Subscribe(ctx context.Context, f gonostr.Filter) ([]*gonostr.Event, string, error) {
	c.nsub++
	sub := fmt.Sprint("s", c.nsub)
	if err := c.write(ctx, "REQ", sub, f); err != nil {
		return nil, "", err
	}
	var out []*gonostr.Event
	for {
		m, label, err := c.read(ctx)
		if err != nil {
			return nil, "", err
		}
		switch label {
		case "EOSE":
			return out, sub, nil
		case "CLOSED", "NOTICE":
			return nil, "", fmt.Errorf("%s", m)
		case "EVENT":
			var ev gonostr.Event
			if err := json.Unmarshal(m[2], &ev); err != nil {
				return nil, "", err
			}
			out = append(out, &ev)
		}
	}
}

// QuerySync runs one REQ to EOSE and closes it.
func (c *wsClient) QuerySync(ctx context.Context, f gonostr.Filter) ([]*gonostr.Event, error) {
	evs, sub, err := c.Subscribe(ctx, f)
	if err != nil {
		return nil, err
	}
	return evs, c.write(ctx, "CLOSE", sub)
}

type infoDoc struct {
	NIPs       []int  `json:"supported_nips"`
	Software   string `json:"software"`
	Version    string `json:"version"`
	Limitation struct {
		MaxLimit int `json:"max_limit"`
	} `json:"limitation"`
}

func fetchInfo(t *testing.T, url string) infoDoc {
	t.Helper()
	resp, err := nip11.Get(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d infoDoc
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
		t.Fatalf("NIP-11 of %s: %v", url, err)
	}
	return d
}

// TestCapApplied checks that a query without a limit, or above the cap,
// returns exactly MaxLimit events (badger alone would return a quarter).
func TestCapApplied(t *testing.T) {
	for _, store := range []string{"native", "badger", "memory"} {
		t.Run(store, func(t *testing.T) {
			r, _ := startRelay(t, store)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			sk := gonostr.GeneratePrivateKey()
			now := time.Now().Unix()
			for i := 0; i < MaxLimit+20; i++ {
				ev := signed(t, sk, now-int64(i), 1, nil, fmt.Sprint("n ", i))
				if err := r.store.SaveEvent(ctx, &ev); err != nil {
					t.Fatal(err)
				}
			}
			for _, limit := range []int{0, MaxLimit * 5, 7} {
				f := gonostr.Filter{Kinds: []int{1}, Limit: limit}
				capLimit(&f)
				ch, err := r.query(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for range ch {
					n++
				}
				wantN := MaxLimit
				if limit == 7 {
					wantN = 7
				}
				if n != wantN {
					t.Errorf("limit %d: got %d events, want %d", limit, n, wantN)
				}
			}
		})
	}
}

// TestLiveAndConcurrent publishes from several connections at once to each
// store while a subscriber listens, and checks nothing is lost or refused
// (upstream, the memory store is not concurrency-safe and sqlite3 answers
// "database is locked").
func TestLiveAndConcurrent(t *testing.T) {
	for _, store := range Stores {
		t.Run(store, func(t *testing.T) { liveAndConcurrent(t, store) })
	}
}

func liveAndConcurrent(t *testing.T, store string) {
	_, wsURL, ctx, sub := dialRelay(t, store)
	if _, _, err := sub.Subscribe(ctx, gonostr.Filter{Kinds: []int{1}}); err != nil {
		t.Fatal(err)
	}

	const writers, each = 4, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws, _, err := websocket.Dial(ctx, wsURL, nil)
			if err != nil {
				errs <- err
				return
			}
			c := &wsClient{ws: ws}
			defer c.Close()
			sk := gonostr.GeneratePrivateKey()
			// Pipelined: all events go out before any OK is read, so the
			// relay stores them concurrently.
			for i := 0; i < each; i++ {
				ev := signed(t, sk, time.Now().Unix(), 1, nil, fmt.Sprint("live ", i))
				if err := c.write(ctx, "EVENT", ev); err != nil {
					errs <- err
					return
				}
			}
			for i := 0; i < each; i++ {
				m, label, err := c.read(ctx)
				if err != nil {
					errs <- err
					return
				}
				if label == "OK" && string(m[2]) != "true" {
					errs <- fmt.Errorf("refused: %s", m[3])
				}
			}
		}()
	}
	delivered := make(chan error, 1)
	go func() {
		seen := map[string]bool{}
		for len(seen) < writers*each {
			m, label, err := sub.read(ctx)
			if err != nil {
				delivered <- fmt.Errorf("live delivery: got %d of %d events: %v", len(seen), writers*each, err)
				return
			}
			if label == "EVENT" {
				var ev gonostr.Event
				json.Unmarshal(m[2], &ev)
				seen[ev.ID] = true
			}
		}
		delivered <- nil
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := <-delivered; err != nil {
		t.Fatal(err)
	}
	got, err := sub.QuerySync(ctx, gonostr.Filter{Kinds: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != writers*each {
		t.Errorf("stored %d events, want %d", len(got), writers*each)
	}
}

func TestUnknownStore(t *testing.T) {
	if _, err := New(Options{Store: "postgres"}); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("unknown store: got %v", err)
	}
	for _, store := range []string{"native", "badger"} {
		if _, err := New(Options{Store: store}); err == nil {
			t.Errorf("%s without a data dir: no error", store)
		}
	}
}

// BenchmarkPublish measures EVENT→OK throughput of the embedded relay over
// one pipelined connection (events signed before the timer starts). Run
// with a fixed count, e.g. -bench Publish -benchtime 5000x.
func BenchmarkPublish(b *testing.B) {
	for _, store := range Stores {
		b.Run(store, func(b *testing.B) {
			r, err := New(Options{Store: store, DataDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(r.Handler())
			defer func() { srv.CloseClientConnections(); srv.Close(); r.Close() }()
			sk := gonostr.GeneratePrivateKey()
			frames := make([][]byte, b.N)
			now := time.Now().Unix()
			for i := range frames {
				ev := gonostr.Event{CreatedAt: gonostr.Timestamp(now), Kind: 1, Content: fmt.Sprint("bench ", i, " ", strings.Repeat("x", 900))}
				ev.Sign(sk)
				frames[i], _ = json.Marshal([]any{"EVENT", ev})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer ws.CloseNow()
			b.ResetTimer()
			start := time.Now()
			go func() {
				for _, f := range frames {
					if ws.Write(ctx, websocket.MessageText, f) != nil {
						return
					}
				}
			}()
			for n := 0; n < b.N; n++ {
				_, msg, err := ws.Read(ctx)
				if err != nil {
					b.Fatalf("after %d OKs: %v", n, err)
				}
				if !strings.HasPrefix(string(msg), `["OK"`) || !strings.Contains(string(msg), "true") {
					b.Fatalf("not an OK true: %s", msg)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
		})
	}
}
