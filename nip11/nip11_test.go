package nip11

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/relaybench/relaybench/internal/testrelay"
)

func serve(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "application/nostr+json" {
			http.Error(w, "want the nostr+json Accept header", 406)
			return
		}
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

func TestFetch(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		body string
		want Info
	}{
		{"well formed", `{"name":"r","description":"d","software":"s","version":"1.2","supported_nips":[1,11,"45"],
			"limitation":{"max_message_length":65536,"max_subscriptions":20,"max_limit":500,"max_event_tags":100,
			"max_content_length":8196,"auth_required":false,"payment_required":true}}`,
			Info{Name: "r", Description: "d", Software: "s", Version: "1.2", SupportedNIPs: []any{1.0, 11.0, "45"},
				Limitation: Limitation{65536, 20, 500, 100, 8196, false, true}}},
		{"numbers as strings", `{"version":2,"limitation":{"max_limit":"1000","auth_required":"true","max_subscriptions":1e2}}`,
			Info{Version: "2", Limitation: Limitation{MaxLimit: 1000, MaxSubscriptions: 100, AuthRequired: true}}},
		{"odd types left at zero", `{"name":["x"],"supported_nips":"1,11","limitation":{"max_limit":null,"max_event_tags":{"a":1},"max_content_length":-5}}`,
			Info{}},
		{"no limitation", `{"name":"bare"}`, Info{Name: "bare"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			info, raw, err := Fetch(ctx, serve(t, 200, tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if string(raw) != tc.body {
				t.Errorf("raw document differs")
			}
			if info.Name != tc.want.Name || info.Description != tc.want.Description || info.Software != tc.want.Software ||
				info.Version != tc.want.Version || info.Limitation != tc.want.Limitation {
				t.Errorf("got %+v, want %+v", *info, tc.want)
			}
			if len(info.SupportedNIPs) != len(tc.want.SupportedNIPs) {
				t.Errorf("supported_nips: got %v", info.SupportedNIPs)
			}
		})
	}
	info, _, _ := Fetch(ctx, serve(t, 200, cases[0].body))
	if !info.SupportsNIP(11) || !info.SupportsNIP(45) || info.SupportsNIP(42) {
		t.Errorf("SupportsNIP wrong for %v", info.SupportedNIPs)
	}
}

func TestFetchErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, url string
		noDoc     bool
	}{
		{"404", serve(t, 404, "not found"), true},
		{"html", serve(t, 200, "<html>hello</html>"), true},
		{"json array", serve(t, 200, "[1,2]"), true},
		{"bad scheme", "ftp://127.0.0.1:1", false},
	} {
		_, _, err := Fetch(ctx, tc.url)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if errors.Is(err, ErrNoDocument) != tc.noDoc {
			t.Errorf("%s: errors.Is(ErrNoDocument)=%v: %v", tc.name, !tc.noDoc, err)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: multi-line error %q", tc.name, err)
		}
	}

	// Nothing listening: a refused connection, quickly.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	if _, _, err := Fetch(ctx, "ws://"+addr); err == nil || errors.Is(err, ErrNoDocument) {
		t.Errorf("closed port: %v", err)
	}

	// A server that never answers: the ctx deadline applies.
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer hang.Close()
	dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, _, err := Fetch(dctx, "ws"+strings.TrimPrefix(hang.URL, "http"))
	if err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("hanging server: %v", err)
	}
}

func TestFetchTestRelay(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{MaxLimit: 42})
	info, _, err := Fetch(context.Background(), r.URL())
	if err != nil {
		t.Fatal(err)
	}
	if info.Limitation.MaxLimit != 42 {
		t.Errorf("max_limit %d", info.Limitation.MaxLimit)
	}
}

func TestWaitReady(t *testing.T) {
	// Ready at once, even without NIP-11.
	r := testrelay.Start(t, testrelay.Config{NoNIP11: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := WaitReady(ctx, r.URL()); err != nil {
		t.Fatal(err)
	}

	// A relay that starts listening only later.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	late := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if ws, err := websocket.Accept(w, req, nil); err == nil {
			ws.CloseNow()
		}
	})}
	defer late.Close()
	go func() {
		time.Sleep(200 * time.Millisecond)
		if ln, err := net.Listen("tcp", addr); err == nil {
			late.Serve(ln)
		}
	}()
	if err := WaitReady(ctx, "ws://"+addr); err != nil {
		t.Fatalf("late relay: %v", err)
	}

	// Nothing ever listens: the last error comes back when ctx ends.
	short, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	ln3, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln3.Addr().String()
	ln3.Close()
	err = WaitReady(short, "ws://"+dead)
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("dead port: %v", err)
	}
	// Something that is not a WebSocket endpoint is not ready.
	plain := serve(t, 200, "{}")
	short2, cancel3 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel3()
	if err := WaitReady(short2, plain); err == nil {
		t.Error("plain HTTP server reported ready")
	}
}

func TestParseMakesStringsPrintable(t *testing.T) {
	info, err := Parse([]byte(`{"software":"orly\u001b[2J","version":"0.66.0\n","name":"a\nb"}`))
	if err != nil {
		t.Fatal(err)
	}
	if info.Version != "0.66.0" || info.Software != `orly\x1b[2J` || info.Name != `a\nb` {
		t.Fatalf("%q %q %q", info.Version, info.Software, info.Name)
	}
}
