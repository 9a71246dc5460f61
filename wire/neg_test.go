package wire

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/relaybench/relaybench/internal/testkit"
	"github.com/relaybench/relaybench/nostr"
)

func TestParseNegFrames(t *testing.T) {
	for _, tc := range []struct {
		in     string
		kind   frameKind
		a, b   string
		hasErr bool
	}{
		{in: `["NEG-MSG","s1","6100"]`, kind: kindNegMsg, a: "s1", b: "6100"},
		{in: ` [ "NEG-MSG" , "s\u0031" , "61" ] `, kind: kindNegMsg, a: "s1", b: "61"},
		{in: `["NEG-ERR","s","blocked: too many records"]`, kind: kindNegErr, a: "s", b: "blocked: too many records"},
		{in: `["NEG-ERROR","s","CLOSED"]`, kind: kindNegErr, a: "s", b: "CLOSED"},
		{in: `["NEG-MSG","s"]`, hasErr: true},
		{in: `["NEG-MSG","s",61]`, hasErr: true},
		{in: `["NEG-ERR","s","x","y"]`, hasErr: true},
	} {
		f, ok := parseCase(t, tc.in, tc.hasErr)
		if !ok {
			continue
		}
		if f.kind != tc.kind || f.a.String() != tc.a || f.b.String() != tc.b || len(f.obj) != len(tc.in) {
			t.Errorf("%s: kind %d a %q b %q obj %d", tc.in, f.kind, f.a.String(), f.b.String(), len(f.obj))
		}
	}
}

// TestNegSession checks the frames a session writes and that the relay's
// answers reach the right session: NEG-MSG, then NEG-ERR (also as
// NEG-ERROR), and that a closed session's late message is only counted.
func TestNegSession(t *testing.T) {
	got := make(chan []string, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		testkit.Frames(r.Context(), c, nil, func(f testkit.Frame) bool {
			var id string
			json.Unmarshal(f.Msg[1], &id)
			got <- []string{f.Label, id, string(f.Raw)}
			switch {
			case f.Label == "NEG-OPEN" && id == "a":
				c.Write(r.Context(), websocket.MessageText, []byte(`["NEG-MSG","a","6101"]`))
			case f.Label == "NEG-MSG" && id == "a":
				c.Write(r.Context(), websocket.MessageText, []byte(`["NEG-ERR","a","blocked: too many records"]`))
			case f.Label == "NEG-OPEN" && id == "b":
				c.Write(r.Context(), websocket.MessageText, []byte(`["NEG-ERROR","b","CLOSED"]`))
			case f.Label == "NEG-CLOSE":
				c.Write(r.Context(), websocket.MessageText, []byte(`["NEG-MSG","`+id+`","61"]`))
			}
			return true
		})
	}))
	defer srv.Close()
	cn, err := Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cn.Close()

	type ev struct{ msg, reason string }
	evs := make(chan ev, 10)
	h := NegHandler{
		OnMsg: func(msg string, n int, _ int64) { evs <- ev{msg: msg} },
		OnErr: func(reason string, class Class, _ int64) { evs <- ev{reason: reason + "|" + string(class)} },
	}
	next := func() ev {
		t.Helper()
		select {
		case e := <-evs:
			return e
		case <-time.After(5 * time.Second):
			t.Fatal("no answer")
		}
		return ev{}
	}
	s, n, err := cn.NegOpen("a", nostr.Filter{Kinds: []int{1}}, "6100", h)
	if err != nil {
		t.Fatal(err)
	}
	if m := <-got; m[2] != `["NEG-OPEN","a",{"kinds":[1]},"6100"]` || n != len(m[2]) {
		t.Errorf("NEG-OPEN written as %s (%d bytes counted)", m[2], n)
	}
	if _, _, err := cn.NegOpen("a", nostr.Filter{}, "61", h); err == nil {
		t.Error("a second session with the same id was opened")
	}
	if e := next(); e.msg != "6101" {
		t.Errorf("first answer %+v", e)
	}
	if _, err := s.Msg("6102"); err != nil {
		t.Fatal(err)
	}
	if m := <-got; m[2] != `["NEG-MSG","a","6102"]` {
		t.Errorf("NEG-MSG written as %s", m[2])
	}
	if e := next(); e.reason != "blocked: too many records|blocked" {
		t.Errorf("NEG-ERR delivered as %+v", e)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Ended by the relay: no NEG-CLOSE is sent for it.

	s2, _, err := cn.NegOpen("b", nostr.Filter{}, "61", h)
	if err != nil {
		t.Fatal(err)
	}
	<-got
	if e := next(); !strings.HasPrefix(e.reason, "CLOSED (sent as NEG-ERROR") {
		t.Errorf("NEG-ERROR delivered as %+v", e)
	}
	s2.Close()

	s3, _, err := cn.NegOpen("c", nostr.Filter{}, "61", h)
	if err != nil {
		t.Fatal(err)
	}
	<-got
	if err := s3.Close(); err != nil {
		t.Fatal(err)
	}
	if m := <-got; m[0] != "NEG-CLOSE" || m[1] != "c" {
		t.Errorf("after NEG-ERR and a close, got %v", m)
	}
	// The relay's answer to the NEG-CLOSE is for no open session: counted.
	deadline := time.Now().Add(5 * time.Second)
	for cn.Stats().Unknown == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if cn.Stats().Unknown != 1 || len(evs) != 0 {
		t.Errorf("late NEG-MSG: %d unknown, %d delivered", cn.Stats().Unknown, len(evs))
	}
}
