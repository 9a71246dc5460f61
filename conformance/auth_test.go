package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"github.com/relaybench/relaybench/internal/secp"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/relay/sink"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/wire"
)

// authGate is a NIP-42 gate in front of a relay, as a relay that requires
// AUTH (ORLY with ORLY_AUTH_REQUIRED): a challenge at connect; every EVENT
// answered OK false "auth-required:" and every REQ CLOSED
// "auth-required:" until the connection sent a valid AUTH (kind 22242,
// this challenge, this relay, id and signature right); then everything is
// passed both ways, in order.
type authGate struct {
	url, upstream string
	refuse        bool // answer every AUTH OK false
	readsOnly     bool // let EVENTs through unauthenticated: only REQs need AUTH

	mu    sync.Mutex
	valid int      // valid AUTHs (accepted unless refuse)
	bad   []string // invalid AUTH events
}

func newAuthGate(t *testing.T, upstream string, refuse bool) *authGate {
	g := &authGate{upstream: upstream, refuse: refuse}
	srv := httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(srv.Close)
	g.url = "ws" + strings.TrimPrefix(srv.URL, "http")
	return g
}

func (g *authGate) serve(w http.ResponseWriter, r *http.Request) {
	cl, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer cl.CloseNow()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	up, _, err := websocket.Dial(ctx, g.upstream, nil)
	if err != nil {
		return
	}
	defer up.CloseNow()
	up.SetReadLimit(readLimit)
	cl.SetReadLimit(readLimit)
	var wmu sync.Mutex
	send := func(msg string) error {
		wmu.Lock()
		defer wmu.Unlock()
		return cl.Write(ctx, websocket.MessageText, []byte(msg))
	}
	go func() {
		defer cancel()
		for {
			_, msg, err := up.Read(ctx)
			if err != nil || send(string(msg)) != nil {
				cl.CloseNow()
				return
			}
		}
	}()
	var b [16]byte
	_, _ = rand.Read(b[:])
	chal := hex.EncodeToString(b[:])
	if send(`["AUTH","`+chal+`"]`) != nil {
		return
	}
	authed := false
	for {
		_, msg, err := cl.Read(ctx)
		if err != nil {
			return
		}
		var arr []json.RawMessage
		var label string
		if json.Unmarshal(msg, &arr) != nil || len(arr) < 2 || json.Unmarshal(arr[0], &label) != nil {
			continue
		}
		switch {
		case label == "AUTH":
			ev, err := nostr.ParseEvent(arr[1])
			if err != nil {
				return
			}
			valid := ev.Kind == wire.KindAuth && ev.TagValue("challenge") == chal && ev.TagValue("relay") == g.url &&
				ev.CheckID() && sigValid(ev)
			g.mu.Lock()
			if valid {
				g.valid++
			} else {
				g.bad = append(g.bad, string(arr[1]))
			}
			g.mu.Unlock()
			if !valid || g.refuse {
				send(`["OK","` + ev.ID + `",false,"restricted: not on the list"]`)
				continue
			}
			authed = true
			send(`["OK","` + ev.ID + `",true,""]`)
		case !authed && label == "EVENT" && !g.readsOnly:
			ev, _ := nostr.ParseEvent(arr[1])
			if ev == nil {
				return
			}
			send(`["OK","` + ev.ID + `",false,"auth-required: members only"]`)
		case !authed && label == "REQ":
			send(`["CLOSED",` + string(arr[1]) + `,"auth-required: members only"]`)
		default:
			if up.Write(ctx, websocket.MessageText, msg) != nil {
				return
			}
		}
	}
}

func (g *authGate) counts() (int, []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.valid, append([]string(nil), g.bad...)
}

func sigValid(ev *nostr.Event) bool {
	var pub, id [32]byte
	var sig [64]byte
	_, e1 := hex.Decode(pub[:], []byte(ev.PubKey))
	_, e2 := hex.Decode(id[:], []byte(ev.ID))
	_, e3 := hex.Decode(sig[:], []byte(ev.Sig))
	return e1 == nil && e2 == nil && e3 == nil && secp.Verify(&pub, &id, &sig)
}

// authKey is an AuthFunc signing with a fresh key.
func authKey(t *testing.T) AuthFunc {
	ring := wire.NewAuthKeys(nil)
	var sk [32]byte
	_, _ = rand.Read(sk[:])
	pub, err := ring.SetFixed(sk)
	if err != nil {
		t.Fatal(err)
	}
	return func(challenge, relay string) ([]byte, string, error) { return ring.Sign(pub, challenge, relay) }
}

// Behind a relay that requires NIP-42 AUTH, the checks with Options.Auth
// answer the challenge (on demand and at once) and end as against the
// relay itself: every NIP-01 check passes, each connection authenticated
// with a valid AUTH event.
func TestAuthAnsweredChecksPass(t *testing.T) {
	r := testrelay.New(testrelay.Config{Verify: true})
	defer r.Close()
	for _, always := range []bool{false, true} {
		g := newAuthGate(t, r.URL(), false)
		o := testOpts
		o.Auth, o.AuthAlways = authKey(t), always
		got := runWith(t, g.url, nil, o)
		for id, c := range got {
			want := results.CheckPass
			if needs(id) != 0 {
				want = results.CheckNotAnnounced
			}
			if c.Status != want {
				t.Errorf("always %v: %s: %s, want %s", always, id, describe(c), want)
			}
		}
		accepted, bad := g.counts()
		if accepted == 0 || len(bad) > 0 {
			t.Errorf("always %v: %d AUTHs accepted, invalid: %q", always, accepted, bad)
		}
	}
}

// Without Options.Auth, or when the relay refuses the AUTH, the refusals
// stand: every check that needs a stored event or an answered REQ is not
// run (none unknown, none failed, none passed or named on an empty
// answer), naming auth-required; ephemeral.ok and req.malformed-closed
// pass (an OK false and a CLOSED are the answers they check for), and so
// does event.duplicate-ok-true when only REQs need AUTH.
func TestAuthRefusedChecksNotRun(t *testing.T) {
	r := testrelay.New(testrelay.Config{Verify: true})
	defer r.Close()
	for _, tc := range []struct {
		name          string
		refuse, reads bool
		auth          bool
	}{{"no key", false, false, false}, {"AUTH refused", true, false, true}, {"reads only, no key", false, true, false}} {
		g := newAuthGate(t, r.URL(), tc.refuse)
		g.readsOnly = tc.reads
		o := testOpts
		if tc.auth {
			o.Auth = authKey(t)
		}
		announced := &nip11.Info{SupportedNIPs: []any{1.0, 9.0, 40.0}}
		for id, c := range runWith(t, g.url, announced, o) {
			switch id {
			case "nip11.document", "nip11.cors", "nip42.auth-ok", "nip42.auth-accepted", "nip42.wrong-challenge-refused",
				"nip42.not-broadcast", "nip42.auth-required-prefix", "nip45.count-form", "nip45.count-union",
				"nip45.refused-closed", "nip50.search-content", "nip50.extension-ignored", "nip50.search-and-conditions",
				"nip77.neg-open-answered", "nip77.reconcile":
				if c.Status != results.CheckNotAnnounced {
					t.Errorf("%s: %s: %s, want not announced", tc.name, id, describe(c))
				}
			case "ephemeral.ok", "req.malformed-closed", map[bool]string{true: "event.duplicate-ok-true"}[tc.reads]:
				if c.Status != results.CheckPass {
					t.Errorf("%s: %s: %s, want pass", tc.name, id, describe(c))
				}
			default:
				if c.Status != results.CheckNotRun || !strings.Contains(c.Detail, "auth-required:") {
					t.Errorf("%s: %s: %s, want not run naming auth-required", tc.name, id, describe(c))
				}
			}
		}
		// with a key, each connection answered the challenge (once: a
		// refused AUTH is not sent again), validly
		if valid, bad := g.counts(); (valid > 0) != tc.auth || len(bad) > 0 {
			t.Errorf("%s: %d valid AUTHs sent, invalid %q", tc.name, valid, bad)
		}
	}
}

// A relay that drops every event (the sink relay): the count of
// empty answers to a REQ after a CLOSE is at most the number of such REQs
// (rounds - 1), and the first REQ's empty answer is said apart.
func TestCloseThenReuseCountsRounds(t *testing.T) {
	integration(t)
	srv := httptest.NewServer(sink.New(sink.Options{}))
	defer srv.Close()
	got := runAll(t, "ws"+strings.TrimPrefix(srv.URL, "http"), nil, "req.close-then-reuse")
	c := got["req.close-then-reuse"]
	if c.Status != results.CheckFail || !strings.HasPrefix(c.Detail, "19 of 19 REQs") ||
		!strings.Contains(c.Detail, "the first REQ, before any CLOSE") {
		t.Errorf("%s, want fail, 19 of 19 and the first REQ named", describe(c))
	}
}
