package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/relaybench/relaybench/internal/secp"
	"github.com/relaybench/relaybench/internal/testkit"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/wire"
)

// authGate is a NIP-42 gate in front of a relay: it sends a challenge at
// connect, refuses EVENT ("OK false auth-required:") and REQ ("CLOSED
// auth-required:") until the connection authenticates, checks every AUTH
// event (kind, challenge, relay tag, id, signature) and forwards everything
// else both ways once authenticated.
type authGate struct {
	srv        *httptest.Server
	url        string
	upstream   string
	refuseAuth bool

	mu    sync.Mutex
	keys  map[string]int // AUTH pubkeys accepted (or refused), with counts
	bad   []string       // invalid AUTH events
	gated int            // EVENTs and REQs refused auth-required
}

func newAuthGate(t *testing.T, upstream string, refuseAuth bool) *authGate {
	t.Helper()
	g := &authGate{upstream: upstream, refuseAuth: refuseAuth, keys: map[string]int{}}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	g.url = "ws" + strings.TrimPrefix(g.srv.URL, "http")
	t.Cleanup(g.srv.Close)
	return g
}

func (g *authGate) serve(w http.ResponseWriter, r *http.Request) {
	cl, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return
	}
	defer cl.CloseNow()
	cl.SetReadLimit(32 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	up, _, err := websocket.Dial(ctx, g.upstream, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return
	}
	defer up.CloseNow()
	up.SetReadLimit(32 << 20)
	var wmu sync.Mutex
	send := func(msg []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		return cl.Write(ctx, websocket.MessageText, msg)
	}
	go func() {
		defer cancel()
		for {
			_, msg, err := up.Read(ctx)
			if err != nil || send(msg) != nil {
				cl.CloseNow()
				return
			}
		}
	}()
	var b [16]byte
	copy(b[:], fmt.Sprintf("%p%d", r, time.Now().UnixNano()))
	chal := hex.EncodeToString(b[:])
	if send([]byte(`["AUTH","`+chal+`"]`)) != nil {
		return
	}
	authed := false
	forward := func(raw []byte) { up.Write(ctx, websocket.MessageText, raw) }
	testkit.Frames(ctx, cl, forward, func(f testkit.Frame) bool {
		switch {
		case f.Label == "AUTH":
			ev, err := nostr.ParseEvent(f.Msg[1])
			valid := err == nil && ev.Kind == wire.KindAuth && ev.TagValue("challenge") == chal &&
				ev.TagValue("relay") == g.url && ev.CheckID() && verify.ValidSignature(ev)
			g.mu.Lock()
			if !valid {
				g.bad = append(g.bad, string(f.Msg[1]))
			} else {
				g.keys[ev.PubKey]++
			}
			g.mu.Unlock()
			if !valid || g.refuseAuth {
				send([]byte(`["OK","` + ev.ID + `",false,"restricted: not on the list"]`))
				return true
			}
			authed = true
			send([]byte(`["OK","` + ev.ID + `",true,""]`))
		case !authed && f.Label == "EVENT":
			ev, _ := nostr.ParseEvent(f.Msg[1])
			g.count()
			send([]byte(`["OK","` + ev.ID + `",false,"auth-required: members only"]`))
		case !authed && (f.Label == "REQ" || f.Label == "COUNT"):
			g.count()
			send([]byte(`["CLOSED",` + string(f.Msg[1]) + `,"auth-required: members only"]`))
		default:
			return up.Write(ctx, websocket.MessageText, f.Raw) == nil
		}
		return true
	})
}

func (g *authGate) count() {
	g.mu.Lock()
	g.gated++
	g.mu.Unlock()
}

func (g *authGate) authKeys() (map[string]int, []string, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := map[string]int{}
	for p, n := range g.keys {
		k[p] = n
	}
	return k, append([]string(nil), g.bad...), g.gated
}

// authCounts sums the auth_* counts of a results file.
func authCounts(f *results.File) map[string]int64 {
	c := map[string]int64{}
	for _, r := range f.Runs {
		for _, ph := range r.Phases {
			for k, v := range ph.Counts {
				if strings.HasPrefix(k, "auth_") {
					c[k] += v
				}
			}
			if h := ph.Latency["auth"]; h != nil {
				c["latency_n"] += h.Count
			}
			for _, a := range ph.Accounts {
				c["refused_auth_required"] += a.RefusedBy[string(wire.ClassAuthRequired)]
			}
		}
	}
	return c
}

func corpusKeys(t *testing.T, bin, cache string, extra ...string) map[string]bool {
	t.Helper()
	res := runBin(t, bin, 2*time.Minute, append([]string{"corpus", "--pubkeys", "--cache-dir", cache, "--no-progress"}, extra...)...)
	if res.code != 0 {
		t.Fatalf("corpus --pubkeys: exit %d: %s", res.code, res.stderr)
	}
	keys := map[string]bool{}
	hex64 := regexp.MustCompile(`^[0-9a-f]{64}$`)
	for _, l := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		if !hex64.MatchString(l) {
			t.Fatalf("corpus --pubkeys printed %q", l)
		}
		keys[l] = true
	}
	return keys
}

// TestAuthEveryWorkloadThroughGate runs every workload against a relay
// that refuses everything until AUTH: each passes, authenticating with the
// corpus keys (never another), and counts its AUTH round trips apart.
func TestAuthEveryWorkloadThroughGate(t *testing.T) {
	bin := relaybenchBin(t)
	cache := t.TempDir()
	keys := corpusKeys(t, bin, cache, "--events", "200")
	if len(keys) != 200 {
		t.Fatalf("corpus --pubkeys printed %d keys, want 200 (--authors default)", len(keys))
	}
	for _, w := range workloadOrder {
		t.Run(w, func(t *testing.T) {
			g, res, f := gatedRun(t, bin, cache, false, workloadArgs[w]...)
			if res.code != judge.Passed {
				t.Fatalf("exit %d, want 0 through the AUTH gate\nverdict %+v\n%s", res.code, f.Verdict, lastLines(res.stderr, 10))
			}
			checkAccounts(t, f)
			c := authCounts(f)
			if c["auth_sent"] < 1 || c["auth_ok"] != c["auth_sent"] || c["auth_refused"] != 0 || c["auth_retried"] < 1 || c["latency_n"] != c["auth_ok"] {
				t.Errorf("auth counts %v", c)
			}
			got, bad, gated := g.authKeys()
			if len(bad) > 0 {
				t.Errorf("invalid AUTH events: %v", bad)
			}
			for k := range got {
				if !keys[k] {
					t.Errorf("authenticated with %s, not a corpus key", k)
				}
			}
			// Every operation the gate refused is sent again after AUTH,
			// unless it ended first (an open-loop step's end, its timeout):
			// then it is not accepted.
			var unaccepted, probes int64
			for _, r := range f.Runs {
				if r.Relay.Before != "" {
					probes++ // the REQ asking what the relay held, before any phase: refused, then sent again after AUTH, in no phase's counts
				}
				for _, ph := range r.Phases {
					for _, a := range ph.Accounts {
						unaccepted += a.Requested - a.Accepted
					}
				}
			}
			if n := int64(gated) - probes; c["auth_retried"] > n || n-c["auth_retried"] > unaccepted {
				t.Errorf("gate refused %d operations, %d retried, %d not accepted", gated, c["auth_retried"], unaccepted)
			}
		})
	}
}

// gatedRun runs bin with args (runAgainst, --quiet) against a verifying
// test relay behind an AUTH gate (refusing every AUTH with refuseAuth), and
// returns the gate, the run and its results file.
func gatedRun(t *testing.T, bin, cache string, refuseAuth bool, args ...string) (*authGate, cliResult, *results.File) {
	t.Helper()
	r := testrelay.Start(t, testrelay.Config{Verify: true})
	g := newAuthGate(t, r.URL(), refuseAuth)
	res, f := runAgainst(t, bin, g.url, cache, args, "--quiet")
	return g, res, f
}

// TestAuthRefusedOrOff: when the relay refuses the AUTH, or relaybench does
// not authenticate (--auth off), every EVENT ends refused auth-required, its
// own class, and the run is incomplete (exit 4).
func TestAuthRefusedOrOff(t *testing.T) {
	bin := relaybenchBin(t)
	cache := t.TempDir()
	for _, tc := range []struct {
		name       string
		refuseAuth bool
		flags      []string
	}{
		{"relay refuses AUTH", true, nil},
		{"auth off", false, []string{"--auth", "off"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, res, f := gatedRun(t, bin, cache, tc.refuseAuth, append([]string{"run", "--events", "200", "--queries", "12", "--concurrency", "4", "--timeout", "2s"}, tc.flags...)...)
			if res.code != judge.Incomplete {
				t.Fatalf("exit %d, want %d\n%s", res.code, judge.Incomplete, lastLines(res.stderr, 10))
			}
			checkAccounts(t, f)
			ph := f.Runs[0].Phases[0]
			if a := ph.Account(results.OpEvent); a == nil || a.RefusedBy["auth-required"] != 200 || a.Accepted != 0 {
				t.Fatalf("publish account %+v", a)
			}
			if !strings.Contains(res.stderr, "200 refused (auth-required)") {
				t.Errorf("stderr does not name the class:\n%s", lastLines(res.stderr, 5))
			}
			c := authCounts(f)
			got, _, _ := g.authKeys()
			if tc.refuseAuth {
				// At most one AUTH per connection and key (each author's key
				// is tried once: a whitelist may hold some), then every
				// refusal is final.
				if c["auth_sent"] < 1 || c["auth_sent"] != c["auth_refused"] || c["auth_ok"] != 0 || c["auth_retried"] != 0 {
					t.Errorf("auth counts %v", c)
				}
				n := 0
				for _, v := range got {
					n = max(n, v)
				}
				if n > 5 {
					t.Errorf("one key sent %d times over 4 connections and the one asking what the relay held", n)
				}
			} else if len(got) != 0 || c["auth_sent"] != 0 {
				t.Errorf("--auth off authenticated: %v %v", got, c)
			}
		})
	}
}

// TestAuthKeyFlag: --auth-key (hex or nsec) authenticates every connection
// with that one key.
func TestAuthKeyFlag(t *testing.T) {
	// NIP-19's example key.
	const nsec = "nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5"
	const skHex = "67dea2ed018072d675f5415ecfaed7d2597555e202d85b3d65ea4e58d2d92ffa"
	sk, err := parseAuthKey(nsec)
	if err != nil || hex.EncodeToString(sk[:]) != skHex {
		t.Fatalf("nsec decoded to %x, %v", sk, err)
	}
	for _, bad := range []string{"nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe6", "nsec1abc", strings.Repeat("0", 64), "12"} {
		if _, err := parseAuthKey(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	res := runCLI(t, "run", "--auth-key", "nope", "--events", "10")
	if res.code != 2 || !strings.Contains(res.stderr, "--auth-key") {
		t.Errorf("bad --auth-key: exit %d %s", res.code, res.stderr)
	}

	bin := relaybenchBin(t)
	r := testrelay.Start(t, testrelay.Config{Verify: true})
	g := newAuthGate(t, r.URL(), false)
	out := t.TempDir()
	path := filepath.Join(out, "r.json")
	res = runBin(t, bin, 2*time.Minute, "run", "--events", "200", "--queries", "12", "--concurrency", "4",
		"--relay", g.url, "--cache-dir", t.TempDir(), "--out", out, "--json", path, "--no-progress", "--quiet", "--auth-key", nsec)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, lastLines(res.stderr, 10))
	}
	k, err := wire.NewAuthKeys(secp.Btcec()).Add(sk)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := g.authKeys(); len(got) != 1 || got[k] == 0 {
		t.Errorf("authenticated with %v, want only %s", got, k)
	}
}

// TestAuthSharedRelays runs against the relays the harness configures to
// want AUTH (binaries in ../shared/relays/bin; skipped without them):
// orly-auth passes with AUTH and is refused auth-required without it;
// nostr-rs-relay-auth (0.8.12) accepts AUTH without answering it and
// requires it for nothing.
func TestAuthSharedRelays(t *testing.T) {
	t.Parallel() // ORLY holds each WebSocket upgrade back: the package's other parallel tests run meanwhile
	dir := sharedBinDir(t)
	bin := relaybenchBin(t)
	cache := t.TempDir()
	run := func(t *testing.T, relay string, flags ...string) (int, *results.File, string) {
		if _, err := os.Stat(filepath.Join(dir, map[string]string{"orly-auth": "orly", "nostr-rs-relay-auth": "nostr-rs-relay-sqlite"}[relay])); err != nil {
			t.Skipf("no %s binary in %s", relay, dir)
		}
		res, f, _ := runRecorded(t, bin, append([]string{"run", "--relay", relay, "--bin-dir", dir, "--events", "600", "--queries", "24",
			"--anchor", testAnchor, "--cache-dir", cache, "--quiet"}, flags...)...)
		checkAccounts(t, f)
		return res.code, f, res.stderr
	}
	t.Run("orly-auth", func(t *testing.T) {
		code, f, stderr := run(t, "orly-auth")
		if code != 0 {
			t.Fatalf("with AUTH: exit %d\n%s", code, lastLines(stderr, 10))
		}
		c := authCounts(f)
		if c["auth_sent"] < 1 || c["auth_ok"] != c["auth_sent"] || c["auth_retried"] < 1 || c["refused_auth_required"] != 0 {
			t.Errorf("with AUTH: counts %v", c)
		}
		t.Logf("orly-auth: %v; publish auth p50 %v", c, time.Duration(f.Runs[0].Phases[0].Latency["auth"].Percentiles["50"]))
		code, f, stderr = run(t, "orly-auth", "--auth", "off")
		if code != judge.Incomplete {
			t.Fatalf("without AUTH: exit %d, want 4\n%s", code, lastLines(stderr, 10))
		}
		if c := authCounts(f); c["refused_auth_required"] != 600 || c["auth_sent"] != 0 {
			t.Errorf("without AUTH: counts %v", c)
		}
	})
	t.Run("nostr-rs-relay-auth", func(t *testing.T) {
		code, f, stderr := run(t, "nostr-rs-relay-auth", "--auth", "always")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, lastLines(stderr, 10))
		}
		c := authCounts(f)
		// 0.8.12 answers an accepted AUTH with nothing (only a refused one
		// with OK false): sent, never acknowledged.
		if c["auth_sent"] < 1 || c["auth_refused"] != 0 || c["auth_ok"]+c["auth_unanswered"] != c["auth_sent"] {
			t.Errorf("counts %v", c)
		}
		t.Logf("nostr-rs-relay-auth: %v", c)
	})
}
