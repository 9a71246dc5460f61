package negentropy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	gonostr "github.com/nbd-wtf/go-nostr"
	neg "github.com/nbd-wtf/go-nostr/nip77/negentropy"
	"github.com/nbd-wtf/go-nostr/nip77/negentropy/storage/vector"

	"github.com/relaybench/relaybench/internal/testkit"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/wire"
)

// fakeRelay answers NIP-77 with go-nostr's negentropy as the server over
// items, or misbehaves as mode says: "err" (NEG-ERR at once), "silent"
// (never answers), "garbage" (a NEG-MSG that is not hex).
type fakeRelay struct {
	items     []Item
	frameSize int
	mode      string
	opens     chan string // the filters of NEG-OPENs received, as JSON
	closes    chan string // NEG-CLOSE sub ids
}

func (f *fakeRelay) serve(t *testing.T) string {
	t.Helper()
	f.opens = make(chan string, 100)
	f.closes = make(chan string, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(16 << 20)
		ctx := r.Context()
		sessions := map[string]*neg.Negentropy{}
		testkit.Frames(ctx, c, nil, func(fr testkit.Frame) bool {
			f.answer(ctx, c, sessions, fr)
			return true
		})
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// answer answers one NEG- message as f's mode says.
func (f *fakeRelay) answer(ctx context.Context, c *websocket.Conn, sessions map[string]*neg.Negentropy, fr testkit.Frame) {
	msg := fr.Msg
	var id string
	json.Unmarshal(msg[1], &id)
	reply := func(l, s string) {
		b, _ := json.Marshal([]string{l, id, s})
		c.Write(ctx, websocket.MessageText, b)
	}
	var in string
	switch fr.Label {
	case "NEG-OPEN":
		f.opens <- string(msg[2])
		json.Unmarshal(msg[3], &in)
		v := vector.New()
		for _, it := range f.items {
			v.Insert(gonostr.Timestamp(it.CreatedAt), it.ID)
		}
		v.Seal()
		sessions[id] = neg.New(v, f.frameSize)
	case "NEG-MSG":
		json.Unmarshal(msg[2], &in)
	case "NEG-CLOSE":
		delete(sessions, id)
		f.closes <- id
		return
	default:
		return
	}
	switch f.mode {
	case "err":
		reply("NEG-ERR", "blocked: too many records")
		return
	case "silent":
		return
	case "garbage":
		reply("NEG-MSG", "zz-not-hex")
		return
	}
	s := sessions[id]
	if s == nil {
		reply("NEG-ERR", "closed: no such session")
		return
	}
	out, err := s.Reconcile(in)
	if err != nil {
		reply("NEG-ERR", "error: "+err.Error())
		return
	}
	reply("NEG-MSG", out)
}

func items(prefix string, n int, t0 int64) []Item {
	out := make([]Item, n)
	for i := range out {
		h := sha256.Sum256(fmt.Appendf(nil, "%s-%d", prefix, i))
		out[i] = Item{CreatedAt: t0 + int64(i%977), ID: hex.EncodeToString(h[:])}
	}
	return out
}

func dial(t *testing.T, url string) *wire.Conn {
	t.Helper()
	cn, err := wire.Dial(context.Background(), url, wire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cn.Close() })
	return cn
}

func ids(its []Item) []string {
	out := make([]string, len(its))
	for i, it := range its {
		out[i] = it.ID
	}
	slices.Sort(out)
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestSyncFindsExactDifferences(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		shared, relay, local   int
		frameSize, clientFrame int
		minRT                  int
	}{
		{"partial overlap, small frames", 3000, 600, 300, 4096, 4096, 3},
		{"partial overlap, unlimited", 3000, 600, 300, 0, 0, 2},
		{"identical", 5000, 0, 0, 4096, 0, 1},
		{"empty local set", 0, 2000, 0, 0, 4096, 1},
		{"empty relay", 0, 0, 500, 0, 0, 1},
		{"under one bucket", 10, 5, 3, 0, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shared := items("shared", tc.shared, 1_700_000_000)
			onlyRelay := items("relay", tc.relay, 1_700_000_000)
			onlyLocal := items("local", tc.local, 1_700_000_000)
			fr := &fakeRelay{items: append(slices.Clone(shared), onlyRelay...), frameSize: tc.frameSize}
			url := fr.serve(t)
			set, err := NewSet(append(slices.Clone(shared), onlyLocal...))
			if err != nil {
				t.Fatal(err)
			}
			cn := dial(t, url)
			until := int64(1_800_000_000)
			res, err := Sync(context.Background(), cn, "s1", nostr.Filter{Until: &until}, set, Options{FrameSize: tc.clientFrame, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Converged {
				t.Fatal("not converged")
			}
			if got, want := sorted(res.Need), ids(onlyRelay); !slices.Equal(got, want) {
				t.Errorf("need: %d ids, want %d", len(got), len(want))
			}
			if got, want := sorted(res.Have), ids(onlyLocal); !slices.Equal(got, want) {
				t.Errorf("have: %d ids, want %d", len(got), len(want))
			}
			if res.RoundTrips < tc.minRT || (tc.name == "identical" && res.RoundTrips != 1) {
				t.Errorf("round trips %d, want ≥ %d", res.RoundTrips, tc.minRT)
			}
			if res.BytesUp <= 0 || res.BytesDown <= 0 || res.End <= res.Start {
				t.Errorf("figures not measured: %+v", res)
			}
			if f := <-fr.opens; f != `{"until":1800000000}` {
				t.Errorf("NEG-OPEN filter %s", f)
			}
			select {
			case id := <-fr.closes:
				if id != "s1" {
					t.Errorf("NEG-CLOSE for %q", id)
				}
			case <-time.After(5 * time.Second):
				t.Error("no NEG-CLOSE after convergence")
			}
		})
	}
}

// syncAgainst runs Sync (subscription sub, timeout d) of 50 items against
// a fake relay misbehaving as mode over 100, returning Sync's error.
func syncAgainst(t *testing.T, mode, sub string, d time.Duration) error {
	t.Helper()
	fr := &fakeRelay{items: items("a", 100, 1), mode: mode}
	cn := dial(t, fr.serve(t))
	set, _ := NewSet(items("a", 50, 1))
	_, err := Sync(context.Background(), cn, sub, nostr.Filter{}, set, Options{Timeout: d})
	return err
}

func TestSyncRelayError(t *testing.T) {
	err := syncAgainst(t, "err", "e", 10*time.Second)
	var re *RelayError
	if !errors.As(err, &re) || re.Class != wire.ClassBlocked || re.Reason != "blocked: too many records" {
		t.Fatalf("got %v, want NEG-ERR blocked", err)
	}
}

func TestSyncTimeout(t *testing.T) {
	err := syncAgainst(t, "silent", "t", 200*time.Millisecond)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
}

func TestSyncBadMessage(t *testing.T) {
	err := syncAgainst(t, "garbage", "g", 10*time.Second)
	var pe *ProtocolError
	if !errors.As(err, &pe) {
		t.Fatalf("got %v, want a ProtocolError", err)
	}
}

func TestSyncConnectionLost(t *testing.T) {
	fr := &fakeRelay{items: items("a", 100, 1), mode: "silent"}
	cn := dial(t, fr.serve(t))
	set, _ := NewSet(items("a", 50, 1))
	go func() { time.Sleep(50 * time.Millisecond); cn.Close() }()
	_, err := Sync(context.Background(), cn, "c", nostr.Filter{}, set, Options{Timeout: 30 * time.Second})
	if err == nil || errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want a connection error", err)
	}
}

func TestNewSetRejectsBadIDs(t *testing.T) {
	if _, err := NewSet([]Item{{CreatedAt: 1, ID: "abc"}}); err == nil {
		t.Fatal("a short id was accepted")
	}
}
