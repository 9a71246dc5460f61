package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testkit"
	"github.com/relaybench/relaybench/nostr"
)

// okRelay answers every EVENT with OK true and every REQ with EOSE.
func okRelay(t *testing.T) *testRelay {
	return answeringRelay(t, false, `true,""`)
}

// answeringRelay (over TLS if useTLS) answers every EVENT with an OK of
// okTail (`<accepted>,<reason>`) and every REQ with EOSE.
func answeringRelay(t *testing.T, useTLS bool, okTail string) *testRelay {
	return newRelay(t, useTLS, nil, func(tc *tconn, msg []byte) {
		arr := decode(t, msg)
		switch label(arr) {
		case "EVENT":
			tc.send(`["OK","` + eventID(t, arr[1]) + `",` + okTail + `]`)
		case "REQ":
			tc.send(`["EOSE",` + string(arr[1]) + `]`)
		}
	})
}

func TestPublishAccepted(t *testing.T) {
	r := okRelay(t)
	c := dialT(t, r.url, Options{})
	id, raw := fakeEvent(1, "hello")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ok, err := c.Publish(ctx, id, raw)
	if err != nil {
		t.Fatal(err)
	}
	if ok.ID != id || !ok.Accepted || ok.Reason != "" || ok.Class != ClassNone || ok.Sent == 0 || ok.Recv < ok.Sent {
		t.Fatalf("unexpected OK %+v", ok)
	}
	got := r.received()
	if len(got) != 1 || got[0] != `["EVENT",`+string(raw)+`]` {
		t.Fatalf("relay received %q", got)
	}
	st := c.Stats()
	if st.FramesOut != 1 || st.FramesIn != 1 || st.OKs != 1 || st.UnmatchedOK != 0 || st.Pending != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// The relay collects n events and answers them in reverse order, with a
// reason naming each id and an extra OK for an id never sent.
func TestOutOfOrderOKsMatchedByID(t *testing.T) {
	const n = 50
	var mu sync.Mutex
	var ids []string
	r := newTestRelay(t, nil, func(tc *tconn, msg []byte) {
		arr := decode(t, msg)
		mu.Lock()
		ids = append(ids, eventID(t, arr[1]))
		all := len(ids) == n
		mu.Unlock()
		if !all {
			return
		}
		tc.send(`["OK","` + strings.Repeat("f", 64) + `",true,""]`) // unmatched
		for i := n - 1; i >= 0; i-- {
			accepted := i%2 == 0
			tc.send(fmt.Sprintf(`["OK","%s",%v,"duplicate: have %s"]`, ids[i], accepted, ids[i]))
		}
	})
	c := dialT(t, r.url, Options{})
	results := make(chan OK, n)
	for i := range n {
		id, raw := fakeEvent(i, "x")
		if err := c.SendEvent(id, raw, func(ok OK) { results <- ok }); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for range n {
		ok := within(t, results, "OK")
		if ok.Err != nil || ok.Reason != "duplicate: have "+ok.ID || ok.Class != ClassDuplicate {
			t.Fatalf("OK credited to the wrong event or wrong: %+v", ok)
		}
		var i int
		fmt.Sscanf(ok.ID[56:], "%x", &i)
		if ok.Accepted != (i%2 == 0) {
			t.Fatalf("accepted flag of %s swapped: %+v", ok.ID, ok)
		}
		if seen[ok.ID] {
			t.Fatalf("OK for %s delivered twice", ok.ID)
		}
		seen[ok.ID] = true
	}
	st := c.Stats()
	if st.UnmatchedOK != 1 || st.OKs != n+1 || st.Pending != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestDuplicateInFlight(t *testing.T) {
	r := newTestRelay(t, nil, nil) // never answers
	c := dialT(t, r.url, Options{})
	id, raw := fakeEvent(7, "x")
	if err := c.SendEvent(id, raw, func(OK) {}); err != nil {
		t.Fatal(err)
	}
	if err := c.SendEvent(id, raw, func(OK) {}); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("second send of an in-flight id: got %v, want ErrDuplicate", err)
	}
}

func TestGarbageFramesAndEOSEInsideContent(t *testing.T) {
	garbage := []string{
		``, `not json`, `{"OK":1}`, `[`, `["OK"]`, `["OK","abc",maybe,""]`, `["EVENT","s"]`,
		`["EVENT","s",{"unterminated":"x}]`, `["EOSE","s"] trailing`, `["NOTICE","bad \x escape"]`,
		"[\"NOTICE\",\"raw \x01 control\"]", `["EVENT","s",{"a":[}]]`, `[1,2]`,
	}
	tricky := `content with ["EOSE","s1"] and "EOSE" and ] } { inside`
	_, evRaw := fakeEvent(1, tricky)
	r := newTestRelay(t, nil, func(tc *tconn, msg []byte) {
		if label(decode(t, msg)) != "REQ" {
			return
		}
		for _, g := range garbage {
			tc.send(g)
		}
		tc.ws.Write(context.Background(), 2, []byte(`["EOSE","s1"]`)) // binary: not NIP-01
		tc.send(`["EVENT","s1",` + string(evRaw) + `]`)
		tc.send(`["FUTURE","thing",{"x":[1,2]}]`)
		tc.send(` [ "EOSE" , "s1" ] `)
	})
	var mu sync.Mutex
	var bad []string
	c := dialT(t, r.url, Options{OnMalformed: func(f []byte, err error) {
		mu.Lock()
		bad = append(bad, string(f))
		mu.Unlock()
		if err == nil {
			t.Error("OnMalformed without an error")
		}
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.Query(ctx, "s1", []nostr.Filter{{Kinds: []int{1}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ended != EndEOSE || len(res.Events) != 1 || res.FirstEvent == 0 || res.End < res.FirstEvent || res.Sent == 0 {
		t.Fatalf("query result %+v", res)
	}
	ev, err := nostr.ParseEvent(res.Events[0])
	if err != nil || ev.Content != tricky {
		t.Fatalf("event not delivered intact: %v %q", err, res.Events[0])
	}
	st := c.Stats()
	if want := int64(len(garbage) + 1); st.Malformed != want {
		mu.Lock()
		t.Fatalf("malformed = %d, want %d (reported %q)", st.Malformed, want, bad)
	}
	if st.Unknown != 1 || st.EOSEs != 1 || st.Events != 1 {
		t.Fatalf("stats %+v", st)
	}
	select {
	case <-c.Done():
		t.Fatalf("garbage stopped the connection: %v", c.Err())
	default:
	}
	// The REQ went out as valid JSON with the filter and a CLOSE followed.
	got := r.received()
	if len(got) < 1 || got[0] != `["REQ","s1",{"kinds":[1]}]` {
		t.Fatalf("relay received %q", got)
	}
}

func TestClosedReasonsAndNotice(t *testing.T) {
	r := newTestRelay(t, nil, func(tc *tconn, msg []byte) {
		arr := decode(t, msg)
		if label(arr) != "REQ" {
			return
		}
		tc.send(`["NOTICE","hello \"there\" \u00e9\ud83d\ude00"]`)
		var sub string
		json.Unmarshal(arr[1], &sub)
		if sub == "a\"b" {
			tc.send(`["CLOSED","a\"b","auth-required: say \"who\"\n"]`)
		} else {
			tc.send(`["CLOSED",` + string(arr[1]) + `,"unsupported thing"]`)
		}
	})
	notices := make(chan string, 4)
	c := dialT(t, r.url, Options{OnNotice: func(m string) { notices <- m }})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.Query(ctx, "a\"b", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Ended != EndClosed || res.Reason != "auth-required: say \"who\"" || res.Class != ClassAuthRequired {
		t.Fatalf("result %+v", res)
	}
	res, err = c.Query(ctx, "plain", nil)
	if err != nil || res.Ended != EndClosed || res.Class != ClassOther {
		t.Fatalf("result %+v %v", res, err)
	}
	want := "hello \"there\" é😀"
	if m := within(t, notices, "notice"); m != want {
		t.Fatalf("notice %q, want %q", m, want)
	}
	if ns := c.Notices(); len(ns) != 2 || ns[0] != want {
		t.Fatalf("Notices() = %q", ns)
	}
	// After CLOSED the client must not send CLOSE for that sub.
	for _, m := range r.received() {
		if strings.HasPrefix(m, `["CLOSE"`) {
			t.Fatalf("client sent %s after the relay's CLOSED", m)
		}
	}
}

func TestSubscriptionAndClose(t *testing.T) {
	_, ev := fakeEvent(3, "live")
	r := newTestRelay(t, nil, func(tc *tconn, msg []byte) {
		if label(decode(t, msg)) == "REQ" {
			tc.send(`["EOSE","live"]`)
			tc.send(`["EVENT","live",` + string(ev) + `]`)
		}
	})
	c := dialT(t, r.url, Options{})
	got := make(chan string, 2)
	eose := make(chan int64, 1)
	s, err := c.Req("live", []nostr.Filter{{Authors: []string{"ab"}}}, SubHandler{
		OnEvent: func(raw []byte, recv int64) { got <- string(raw) },
		OnEOSE:  func(recv int64) { eose <- recv },
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Req("live", nil, SubHandler{}); !errors.Is(err, ErrSubExists) {
		t.Fatalf("duplicate sub id: %v", err)
	}
	within(t, eose, "EOSE")
	if e := within(t, got, "live event"); e != string(ev) {
		t.Fatalf("event %s", e)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		rs := r.received()
		if rs[len(rs)-1] == `["CLOSE","live"]` {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("relay never got CLOSE: %q", rs)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAuthAnsweredBySigner(t *testing.T) {
	r := newTestRelay(t, func(tc *tconn) { tc.send(`["AUTH","chal-123"]`) }, func(tc *tconn, msg []byte) {
		arr := decode(t, msg)
		if label(arr) != "AUTH" {
			return
		}
		var ev nostr.Event
		json.Unmarshal(arr[1], &ev)
		tc.send(fmt.Sprintf(`["OK","%s",%v,""]`, ev.ID, ev.TagValue("challenge") == "chal-123"))
	})
	var gotURL string
	c := dialT(t, r.url, Options{AuthSigner: func(ch, url string) ([]byte, string, error) {
		gotURL = url
		ev := nostr.Event{ID: strings.Repeat("c", 64), Kind: 22242, Tags: []nostr.Tag{{"relay", url}, {"challenge", ch}}}
		return ev.AppendJSON(nil), ev.ID, nil
	}})
	within(t, c.Authenticated(), "authentication")
	if c.AuthChallenge() != "chal-123" || gotURL != r.url {
		t.Fatalf("challenge %q url %q", c.AuthChallenge(), gotURL)
	}
	st := c.Stats()
	if st.AuthChallenges != 1 || st.AuthAccepted != 1 || st.AuthRejected != 0 {
		t.Fatalf("stats %+v", st)
	}

	// Without a signer the challenge is only recorded.
	c2 := dialT(t, r.url, Options{})
	deadline := time.Now().Add(10 * time.Second)
	for c2.AuthChallenge() == "" {
		if time.Now().After(deadline) {
			t.Fatal("challenge never recorded")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if len(r.received()) != 1 {
		t.Fatalf("client without signer answered AUTH: %q", r.received())
	}
}

func TestRelayClosesConnection(t *testing.T) {
	var mu sync.Mutex
	n := 0
	r := newTestRelay(t, nil, func(tc *tconn, msg []byte) {
		mu.Lock()
		n++
		last := n == 4
		mu.Unlock()
		if last {
			tc.ws.CloseNow() // abrupt: no OKs, no close frame
		}
	})
	c := dialT(t, r.url, Options{})
	results := make(chan OK, 3)
	for i := range 3 {
		id, raw := fakeEvent(i, "x")
		if err := c.SendEvent(id, raw, func(ok OK) { results <- ok }); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		id, raw := fakeEvent(99, "x")
		_, err := c.Publish(context.Background(), id, raw) // no deadline: must still return
		done <- err
	}()
	for range 3 {
		if ok := within(t, results, "ErrClosed"); !errors.Is(ok.Err, ErrClosed) || ok.Accepted {
			t.Fatalf("pending event got %+v", ok)
		}
	}
	if err := within(t, done, "Publish to return"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Publish: %v", err)
	}
	within(t, c.Done(), "Done")
	if c.Err() == nil || !strings.Contains(c.Err().Error(), "relay closed") {
		t.Fatalf("Err() = %v", c.Err())
	}
	id, raw := fakeEvent(100, "x")
	if err := c.SendEvent(id, raw, func(OK) { t.Error("done called after failed send") }); !errors.Is(err, ErrClosed) {
		t.Fatalf("send on dead conn: %v", err)
	}
}

func TestRelayNeverAnswers(t *testing.T) {
	r := newTestRelay(t, nil, nil)
	c := dialT(t, r.url, Options{})
	id, raw := fakeEvent(1, "x")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	ok, err := c.Publish(ctx, id, raw)
	if !errors.Is(err, ErrTimeout) || !errors.Is(ok.Err, ErrTimeout) || ok.Accepted {
		t.Fatalf("got %+v, %v", ok, err)
	}
	if st := c.Stats(); st.Pending != 0 || st.Expired != 1 {
		t.Fatalf("stats %+v", st)
	}
	// The same id can be sent again after it expired.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	if _, err := c.Publish(ctx2, id, raw); !errors.Is(err, ErrTimeout) {
		t.Fatalf("republish: %v", err)
	}

	// Query against a silent relay ends at the deadline.
	ctx3, cancel3 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel3()
	res, err := c.Query(ctx3, "q", nil)
	if !errors.Is(err, ErrTimeout) || res.Ended != EndTimeout {
		t.Fatalf("query: %+v %v", res, err)
	}
}

func TestOKTimeoutAndExpireBefore(t *testing.T) {
	r := newTestRelay(t, nil, nil)
	c := dialT(t, r.url, Options{OKTimeout: 50 * time.Millisecond})
	results := make(chan OK, 1)
	id, raw := fakeEvent(1, "x")
	if err := c.SendEvent(id, raw, func(ok OK) { results <- ok }); err != nil {
		t.Fatal(err)
	}
	if ok := within(t, results, "sweep"); !errors.Is(ok.Err, ErrTimeout) || ok.ID != id {
		t.Fatalf("got %+v", ok)
	}

	c2 := dialT(t, r.url, Options{})
	if err := c2.SendEvent(id, raw, func(ok OK) { results <- ok }); err != nil {
		t.Fatal(err)
	}
	if n := c2.ExpireBefore(0); n != 0 {
		t.Fatalf("ExpireBefore(0) expired %d", n)
	}
	if n := c2.ExpireBefore(1 << 62); n != 1 {
		t.Fatalf("ExpireBefore(future) expired %d", n)
	}
	if ok := within(t, results, "expiry"); !errors.Is(ok.Err, ErrTimeout) {
		t.Fatalf("got %+v", ok)
	}
}

func TestDialErrors(t *testing.T) {
	ctx := context.Background()
	// Unreachable: a port that was just closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = Dial(ctx, "ws://"+addr, Options{})
	var de *DialError
	if !errors.As(err, &de) || de.Kind != DialUnreachable || !strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("unreachable: %v", err)
	}

	if _, err = Dial(ctx, "http://127.0.0.1:1", Options{}); !errors.As(err, &de) || de.Kind != DialFailed || !strings.Contains(err.Error(), "ws://") {
		t.Fatalf("bad scheme: %v", err)
	}

	// Upgrade refused with 403.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "blocked: go away", http.StatusForbidden)
	}))
	defer srv.Close()
	_, err = Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), Options{})
	if !errors.As(err, &de) || de.Kind != DialUpgradeRefused || de.Status != 403 ||
		!strings.Contains(err.Error(), "HTTP 403 Forbidden: blocked: go away") {
		t.Fatalf("403: %v", err)
	}

	// Timeout: a listener that accepts TCP but never answers the upgrade.
	silent := testkit.ServeTCP(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
	_, err = Dial(ctx, "ws://"+silent, Options{DialTimeout: 200 * time.Millisecond})
	if !errors.As(err, &de) || de.Kind != DialTimeout || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("timeout: %v", err)
	}
}

func TestTCPNoDelaySet(t *testing.T) {
	r := okRelay(t)
	c := dialT(t, r.url, Options{})
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		t.Fatalf("%T has no syscall.RawConn", c.nc)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	v := -1
	var serr error
	if err := rc.Control(func(fd uintptr) {
		v, serr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_NODELAY)
	}); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	if v == 0 {
		t.Fatal("TCP_NODELAY is off on the client socket")
	}
}

func TestDialPool(t *testing.T) {
	r := okRelay(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conns, err := DialPool(ctx, r.url, 4, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range conns {
		id, raw := fakeEvent(i, "p")
		if ok, err := c.Publish(ctx, id, raw); err != nil || !ok.Accepted {
			t.Fatalf("conn %d: %+v %v", i, ok, err)
		}
		c.Close()
	}
	if _, err := DialPool(ctx, "ws://127.0.0.1:1", 3, Options{}); err == nil {
		t.Fatal("DialPool to a closed port succeeded")
	}
}

func TestClassify(t *testing.T) {
	cases := map[string]Class{
		"": ClassNone, "duplicate: x": ClassDuplicate, "blocked: you": ClassBlocked,
		"rate-limited: slow": ClassRateLimited, "invalid: sig": ClassInvalid, "pow: 20": ClassPoW,
		"restricted: no": ClassRestricted, "error: db": ClassError, "auth-required: pls": ClassAuthRequired,
		"mute: none": ClassMute, "whatever": ClassOther, "weird: x": ClassOther, "duplicate:": ClassDuplicate,
		"replaced: have newer event": ClassReplaced, "blocked: event is older than existing replaceable event": ClassReplaced,
	}
	for in, want := range cases {
		if got := Classify(in); got != want {
			t.Errorf("Classify(%q) = %q, want %q", in, got, want)
		}
	}
}

// Over wss:// messages go through coder/websocket's writer instead of the
// direct framing; the behaviour must be the same.
func TestTLSConnection(t *testing.T) {
	r := answeringRelay(t, true, `false,"blocked: tls test"`)
	if !strings.HasPrefix(r.url, "wss://") {
		t.Fatalf("url %s", r.url)
	}
	c := dialT(t, r.url, Options{TLSConfig: r.srv.Client().Transport.(*http.Transport).TLSClientConfig})
	if c.direct {
		t.Fatal("wss connection uses direct framing")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id, raw := fakeEvent(5, "tls")
	ok, err := c.Publish(ctx, id, raw)
	if err != nil || ok.Accepted || ok.Class != ClassBlocked || ok.Reason != "blocked: tls test" {
		t.Fatalf("%+v %v", ok, err)
	}
	res, err := c.Query(ctx, "q", []nostr.Filter{{Limit: 1}})
	if err != nil || res.Ended != EndEOSE {
		t.Fatalf("%+v %v", res, err)
	}
	if got := r.waitReceived(t, 3); got[0] != `["EVENT",`+string(raw)+`]` || got[2] != `["CLOSE","q"]` {
		t.Fatalf("relay received %q", got)
	}
}

// A relay that stops reading: writes block, the write timeout fails the
// connection, and every pending event gets ErrClosed; nothing hangs.
func TestWriteTimeoutOnStuckRelay(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	r := newTestRelay(t, func(tc *tconn) { <-release }, nil) // never reads
	c := dialT(t, r.url, Options{WriteTimeout: 300 * time.Millisecond})
	big := strings.Repeat("z", 1<<20)
	results := make(chan OK, 256)
	sent := 0
	deadline := time.Now().Add(20 * time.Second)
	for ; time.Now().Before(deadline); sent++ {
		id, raw := fakeEvent(sent, big)
		if err := c.SendEvent(id, raw, func(ok OK) { results <- ok }); err != nil {
			if !errors.Is(err, ErrClosed) {
				t.Fatalf("send: %v", err)
			}
			break
		}
		if sent == 255 {
			t.Fatal("256 MiB written to a relay that does not read")
		}
	}
	within(t, c.Done(), "connection to fail")
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "write blocked") {
		t.Fatalf("Err() = %v", err)
	}
	for range sent {
		if ok := within(t, results, "ErrClosed"); !errors.Is(ok.Err, ErrClosed) {
			t.Fatalf("got %+v", ok)
		}
	}
}

func TestQueryConnectionLost(t *testing.T) {
	r := newTestRelay(t, nil, func(tc *tconn, msg []byte) {
		if arr := decode(t, msg); label(arr) == "REQ" && string(arr[1]) == `"q"` {
			_, ev := fakeEvent(1, "before the end")
			tc.send(`["EVENT","q",` + string(ev) + `]`)
			tc.ws.CloseNow()
		}
	})
	c := dialT(t, r.url, Options{})
	lost := make(chan error, 1)
	if _, err := c.Req("other", nil, SubHandler{OnConnError: func(err error) { lost <- err }}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Query(context.Background(), "q", nil)
	if err == nil || res.Ended != EndConnError || len(res.Events) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	if e := within(t, lost, "OnConnError"); e == nil {
		t.Fatal("OnConnError with nil error")
	}
	if _, err := c.Query(context.Background(), "again", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("query on dead conn: %v", err)
	}
}

// Closing connections (by us or by the relay) stops every goroutine they
// started.
func TestNoGoroutineLeak(t *testing.T) {
	r := okRelay(t)
	before := runtime.NumGoroutine()
	for i := range 5 {
		c := dialT(t, r.url, Options{OKTimeout: time.Second})
		id, raw := fakeEvent(i, "x")
		if _, err := c.Publish(context.Background(), id, raw); err != nil {
			t.Fatal(err)
		}
		c.Close()
		within(t, c.Done(), "Done")
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before+2 { // the relay's handlers wind down too
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}
