package wire

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/secp"
	"github.com/relaybench/relaybench/nostr"
)

// authRelay is a test relay that demands NIP-42 AUTH before EVENT and REQ.
type authRelay struct {
	*testRelay
	mu    sync.Mutex
	state map[*tconn]*authConnState
	auths []string // pubkeys of the AUTH events received, in order
}

type authConnState struct {
	chal   string
	authed map[string]bool // authenticated keys
	last   string
}

type authRelayConfig struct {
	chalAtConnect bool // send the challenge on connect (else with the first refusal)
	refuseAuth    bool // answer every AUTH OK false
	oneKey        bool // keep only the last authenticated key
	matchAuthor   bool // an EVENT's author must be an authenticated key
}

func newAuthRelay(t *testing.T, cfg authRelayConfig) *authRelay {
	t.Helper()
	ar := &authRelay{state: map[*tconn]*authConnState{}}
	st := func(tc *tconn) *authConnState {
		ar.mu.Lock()
		defer ar.mu.Unlock()
		s := ar.state[tc]
		if s == nil {
			s = &authConnState{chal: fmt.Sprintf("chal-%d", len(ar.state)), authed: map[string]bool{}}
			ar.state[tc] = s
		}
		return s
	}
	refuse := func(tc *tconn, s *authConnState, msg string) {
		tc.send(msg)
		if !cfg.chalAtConnect {
			tc.send(`["AUTH","` + s.chal + `"]`)
		}
	}
	ar.testRelay = newTestRelay(t, func(tc *tconn) {
		s := st(tc)
		if cfg.chalAtConnect {
			tc.send(`["AUTH","` + s.chal + `"]`)
		}
	}, func(tc *tconn, msg []byte) {
		s := st(tc)
		arr := decode(t, msg)
		switch label(arr) {
		case "AUTH":
			ev, err := nostr.ParseEvent(arr[1])
			if err != nil {
				t.Errorf("AUTH event: %v", err)
				return
			}
			ar.mu.Lock()
			ar.auths = append(ar.auths, ev.PubKey)
			ar.mu.Unlock()
			valid := ev.Kind == KindAuth && ev.TagValue("challenge") == s.chal && ev.TagValue("relay") == ar.url && ev.CheckID() && verifySig(ev)
			if !valid {
				t.Errorf("invalid AUTH event %s", arr[1])
			}
			if cfg.refuseAuth || !valid {
				tc.send(fmt.Sprintf(`["OK","%s",false,"restricted: not on the list"]`, ev.ID))
				return
			}
			ar.mu.Lock()
			if cfg.oneKey {
				s.authed = map[string]bool{}
			}
			s.authed[ev.PubKey], s.last = true, ev.PubKey
			ar.mu.Unlock()
			tc.send(fmt.Sprintf(`["OK","%s",true,""]`, ev.ID))
		case "EVENT":
			ev, _ := nostr.ParseEvent(arr[1])
			ar.mu.Lock()
			ok := len(s.authed) > 0 && (!cfg.matchAuthor || s.authed[ev.PubKey])
			ar.mu.Unlock()
			if !ok {
				refuse(tc, s, fmt.Sprintf(`["OK","%s",false,"auth-required: we only accept events from registered users"]`, ev.ID))
				return
			}
			tc.send(fmt.Sprintf(`["OK","%s",true,""]`, ev.ID))
		case "REQ":
			var sub string
			json.Unmarshal(arr[1], &sub)
			ar.mu.Lock()
			ok := len(s.authed) > 0
			ar.mu.Unlock()
			if !ok {
				refuse(tc, s, `["CLOSED","`+sub+`","auth-required: log in first"]`)
				return
			}
			tc.send(`["EOSE","` + sub + `"]`)
		}
	})
	return ar
}

func (ar *authRelay) authPubkeys() []string {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	return append([]string(nil), ar.auths...)
}

func verifySig(ev *nostr.Event) bool {
	var pub, id [32]byte
	var sig [64]byte
	if _, err := hex.Decode(pub[:], []byte(ev.PubKey)); err != nil {
		return false
	}
	hex.Decode(id[:], []byte(ev.ID))
	if _, err := hex.Decode(sig[:], []byte(ev.Sig)); err != nil {
		return false
	}
	return secp.Verify(&pub, &id, &sig)
}

// testKeys returns a ring with n keys and their public keys.
func testKeys(t *testing.T, n int) (*AuthKeys, []string) {
	t.Helper()
	k := NewAuthKeys(secp.Btcec())
	var pubs []string
	for i := range n {
		var sk [32]byte
		sk[31] = byte(i + 1)
		sk[0] = 7
		pub, err := k.Add(sk)
		if err != nil {
			t.Fatal(err)
		}
		pubs = append(pubs, pub)
	}
	return k, pubs
}

// authorEvent returns an event object by pubkey with id n (unsigned: the
// test relay does not check event signatures).
func authorEvent(n int, pubkey string) (string, []byte) {
	id := fmt.Sprintf("%064x", n)
	ev := nostr.Event{ID: id, PubKey: pubkey, CreatedAt: 1700000000, Kind: 1, Content: "hi", Sig: strings.Repeat("b", 128)}
	return id, ev.AppendJSON(nil)
}

func publishT(t *testing.T, c *Conn, id string, raw []byte) OK {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ok, err := c.Publish(ctx, id, raw)
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	return ok
}

// pipelineAuthored dials an auth relay of cfg with one key and sends n
// events by that key without waiting; their OKs arrive on the channel.
func pipelineAuthored(t *testing.T, cfg authRelayConfig, n int) (*authRelay, *Conn, chan OK) {
	t.Helper()
	r := newAuthRelay(t, cfg)
	keys, pubs := testKeys(t, 1)
	c := dialT(t, r.url, Options{Auth: &Auth{Keys: keys}})
	oks := make(chan OK, n)
	for i := range n {
		id, raw := authorEvent(i, pubs[0])
		if err := c.SendEvent(id, raw, func(ok OK) { oks <- ok }); err != nil {
			t.Fatal(err)
		}
	}
	return r, c, oks
}

func TestAuthOnDemandRetriesRefusedEvent(t *testing.T) {
	for _, atConnect := range []bool{true, false} {
		t.Run(fmt.Sprintf("challenge-at-connect=%v", atConnect), func(t *testing.T) {
			r := newAuthRelay(t, authRelayConfig{chalAtConnect: atConnect, matchAuthor: true})
			keys, pubs := testKeys(t, 3)
			c := dialT(t, r.url, Options{Auth: &Auth{Mode: AuthOnDemand, Keys: keys}})
			id, raw := authorEvent(1, pubs[2])
			ok := publishT(t, c, id, raw)
			if !ok.Accepted || ok.Class != ClassNone {
				t.Fatalf("OK %+v, want accepted after AUTH", ok)
			}
			// The AUTH was signed by the event's author, not the default key.
			if got := r.authPubkeys(); len(got) != 1 || got[0] != pubs[2] {
				t.Fatalf("AUTH pubkeys %v, want [%s]", got, pubs[2])
			}
			st := c.Stats()
			if st.AuthSent != 1 || st.AuthAccepted != 1 || st.AuthRejected != 0 || st.AuthRetried != 1 || st.Pending != 0 {
				t.Fatalf("stats %+v", st)
			}
			if rtt := c.AuthRoundTrips(); len(rtt) != 1 || rtt[0] <= 0 {
				t.Fatalf("round trips %v", rtt)
			}
			within(t, c.Authenticated(), "Authenticated")
			// Authenticated now: the next event goes straight through.
			id, raw = authorEvent(2, pubs[2])
			if ok := publishT(t, c, id, raw); !ok.Accepted {
				t.Fatalf("second event %+v", ok)
			}
			if st := c.Stats(); st.AuthSent != 1 || st.AuthRetried != 1 {
				t.Fatalf("stats after second event %+v", st)
			}
		})
	}
}

func TestAuthPipelinedEventsShareOneAuth(t *testing.T) {
	const n = 50
	r, c, oks := pipelineAuthored(t, authRelayConfig{chalAtConnect: true}, n)
	for range n {
		ok := within(t, oks, "OK")
		if !ok.Accepted || ok.Err != nil {
			t.Fatalf("OK %+v", ok)
		}
		if ok.Sent <= 0 || ok.Recv < ok.Sent {
			t.Fatalf("times %+v", ok)
		}
	}
	st := c.Stats()
	if st.AuthSent != 1 || st.AuthAccepted != 1 {
		t.Fatalf("%d AUTHs sent (%d accepted), want 1: %+v", st.AuthSent, st.AuthAccepted, st)
	}
	// Every event refused before the AUTH is sent once more, and only those.
	if st.AuthRetried < 1 || st.AuthRetried > n {
		t.Fatalf("retried %d", st.AuthRetried)
	}
	events := 0
	for _, m := range r.received() {
		if strings.HasPrefix(m, `["EVENT",`) {
			events++
		}
	}
	if int64(events) != n+st.AuthRetried {
		t.Fatalf("relay got %d EVENTs, want %d + %d retried", events, n, st.AuthRetried)
	}
}

func TestAuthRefusedEndsOpsRefused(t *testing.T) {
	const n = 10
	_, c, oks := pipelineAuthored(t, authRelayConfig{chalAtConnect: true, refuseAuth: true}, n)
	for range n {
		ok := within(t, oks, "OK")
		if ok.Accepted || ok.Err != nil || ok.Class != ClassAuthRequired || !strings.HasPrefix(ok.Reason, "auth-required:") {
			t.Fatalf("OK %+v, want the auth-required refusal", ok)
		}
	}
	// The REQ ends CLOSED auth-required too, without another AUTH.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, _ := c.Query(ctx, "q1", []nostr.Filter{{Kinds: []int{1}}})
	if res.Ended != EndClosed || res.Class != ClassAuthRequired {
		t.Fatalf("query %+v", res)
	}
	st := c.Stats()
	if st.AuthSent != 1 || st.AuthRejected != 1 || st.AuthAccepted != 0 || st.AuthRetried != 0 || st.Pending != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestAuthRetriesClosedREQ(t *testing.T) {
	for _, atConnect := range []bool{true, false} {
		t.Run(fmt.Sprintf("challenge-at-connect=%v", atConnect), func(t *testing.T) {
			r := newAuthRelay(t, authRelayConfig{chalAtConnect: atConnect})
			keys, pubs := testKeys(t, 2)
			c := dialT(t, r.url, Options{Auth: &Auth{Keys: keys}})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := c.Query(ctx, "q1", []nostr.Filter{{Kinds: []int{1}}})
			if err != nil || res.Ended != EndEOSE {
				t.Fatalf("query %+v %v, want EOSE after AUTH", res, err)
			}
			if res.Sent <= 0 || res.End < res.Sent {
				t.Fatalf("times %+v", res)
			}
			// A REQ authenticates with the default key (the first added).
			if got := r.authPubkeys(); len(got) != 1 || got[0] != pubs[0] {
				t.Fatalf("AUTH pubkeys %v", got)
			}
			if st := c.Stats(); st.AuthSent != 1 || st.AuthAccepted != 1 || st.AuthRetried != 1 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

func TestAuthOffAndEager(t *testing.T) {
	r := newAuthRelay(t, authRelayConfig{chalAtConnect: true})
	keys, pubs := testKeys(t, 1)

	// Off: the refusal is final and nothing is signed.
	off := dialT(t, r.url, Options{Auth: &Auth{Mode: AuthOff, Keys: keys}})
	id, raw := authorEvent(1, pubs[0])
	if ok := publishT(t, off, id, raw); ok.Accepted || ok.Class != ClassAuthRequired {
		t.Fatalf("off: %+v", ok)
	}
	if st := off.Stats(); st.AuthSent != 0 || st.AuthRetried != 0 {
		t.Fatalf("off: stats %+v", st)
	}

	// Always: the challenge at connect is answered before anything is sent.
	eager := dialT(t, r.url, Options{Auth: &Auth{Mode: AuthEager, Keys: keys}})
	within(t, eager.Authenticated(), "eager authentication")
	id, raw = authorEvent(2, pubs[0])
	if ok := publishT(t, eager, id, raw); !ok.Accepted {
		t.Fatalf("eager: %+v", ok)
	}
	if st := eager.Stats(); st.AuthSent != 1 || st.AuthAccepted != 1 || st.AuthRetried != 0 {
		t.Fatalf("eager: stats %+v", st)
	}

	// The process default applies to connections dialled without an Auth.
	SetDefaultAuth(&Auth{Keys: keys})
	defer SetDefaultAuth(nil)
	def := dialT(t, r.url, Options{})
	id, raw = authorEvent(3, pubs[0])
	if ok := publishT(t, def, id, raw); !ok.Accepted {
		t.Fatalf("default: %+v", ok)
	}
}

// A relay that keeps one authenticated key and wants it to be the event's
// author: a connection publishing for two authors authenticates again at
// each switch; each event is sent at most twice.
func TestAuthOneKeyRelaySwitchesAuthors(t *testing.T) {
	r := newAuthRelay(t, authRelayConfig{chalAtConnect: true, oneKey: true, matchAuthor: true})
	keys, pubs := testKeys(t, 2)
	c := dialT(t, r.url, Options{Auth: &Auth{Keys: keys}})
	for i := range 4 {
		id, raw := authorEvent(i, pubs[i%2])
		if ok := publishT(t, c, id, raw); !ok.Accepted {
			t.Fatalf("event %d: %+v", i, ok)
		}
	}
	if st := c.Stats(); st.AuthSent != 4 || st.AuthRetried != 4 {
		t.Fatalf("stats %+v", st)
	}

	// A fixed key (--auth-key) that is not the author: the relay keeps
	// refusing; the event is retried once and ends refused.
	fixed := NewAuthKeys(secp.Btcec())
	var sk [32]byte
	sk[5] = 9
	if _, err := fixed.SetFixed(sk); err != nil {
		t.Fatal(err)
	}
	c2 := dialT(t, r.url, Options{Auth: &Auth{Keys: fixed}})
	id, raw := authorEvent(10, pubs[0])
	if ok := publishT(t, c2, id, raw); ok.Accepted || ok.Class != ClassAuthRequired {
		t.Fatalf("fixed key: %+v", ok)
	}
	if st := c2.Stats(); st.AuthSent != 1 || st.AuthAccepted != 1 || st.AuthRetried != 1 {
		t.Fatalf("fixed key: stats %+v", st)
	}
}

func TestParseSecretKey(t *testing.T) {
	if _, err := ParseSecretKey(strings.Repeat("0", 64)); err == nil {
		t.Error("zero key accepted")
	}
	if _, err := ParseSecretKey("xyz"); err == nil {
		t.Error("short key accepted")
	}
	if _, err := ParseSecretKey(strings.Repeat("0", 63) + "1"); err != nil {
		t.Error(err)
	}
	for _, s := range []string{"on-demand", "always", "off"} {
		m, err := ParseAuthMode(s)
		if err != nil || m.String() != s {
			t.Errorf("%s: %v %v", s, m, err)
		}
	}
}
