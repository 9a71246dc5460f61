package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	gonostr "github.com/nbd-wtf/go-nostr"

	"github.com/relaybench/relaybench/nip11"
)

// The serve tests run `relaybench relay serve` as a real child process (this
// test binary re-executed into TestRelayServeHelper), so that signals,
// stdout and the exit are those of the command.
const serveArgsEnv = "RELAYBENCH_TEST_RELAY_SERVE_ARGS"

func TestRelayServeHelper(t *testing.T) {
	args := os.Getenv(serveArgsEnv)
	if args == "" {
		t.Skip("helper process for the relay serve tests")
	}
	var argv []string
	if err := json.Unmarshal([]byte(args), &argv); err != nil {
		t.Fatal(err)
	}
	os.Exit(run(argv))
}

func TestRelayServe(t *testing.T) {
	for _, store := range []string{"badger", "memory", "sink"} {
		t.Run(store, func(t *testing.T) {
			tmp := t.TempDir()
			p := startChild(t, tmp, "relay", "serve", "-store", store)
			url := listeningURL(t, p)

			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := nip11.WaitReady(ctx, url); err != nil {
				t.Fatal(err)
			}
			info, _, err := nip11.Fetch(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			if store != "sink" {
				if !strings.Contains(info.Software, "khatru v0.19.1, "+store) || info.Limitation.MaxLimit != 1000 {
					t.Errorf("NIP-11: software %q max_limit %d", info.Software, info.Limitation.MaxLimit)
				}
				if store == "badger" {
					if dirs, _ := filepath.Glob(filepath.Join(tmp, "relaybench-relay-*")); len(dirs) != 1 {
						t.Errorf("want one temporary data dir while serving, got %v", dirs)
					}
				}
			} else if !strings.Contains(info.Software, "sink") {
				t.Errorf("NIP-11 software %q, want the sink", info.Software)
			}
			publishAndQuery(t, ctx, url, store != "sink")

			// A client still connected at shutdown is disconnected: the
			// embedded relay says goodbye with a 1001 close frame.
			open, _, err := websocket.Dial(ctx, url, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer open.CloseNow()
			// One round trip, so the relay has surely registered the client.
			if err := open.Write(ctx, websocket.MessageText, []byte(`["REQ","r",{"kinds":[4]}]`)); err != nil {
				t.Fatal(err)
			}
			if _, b, err := open.Read(ctx); err != nil || !strings.HasPrefix(string(b), `["EOSE"`) {
				t.Fatalf("REQ round trip: %q %v", b, err)
			}
			p.terminate()
			_, _, err = open.Read(ctx)
			if err == nil {
				t.Error("connection still open after SIGTERM")
			} else if st := websocket.CloseStatus(err); store != "sink" && st != websocket.StatusGoingAway {
				t.Errorf("close status %v (%v), want 1001 going away", st, err)
			}
			if code := p.exit(t, 20*time.Second); code != 0 {
				t.Errorf("exit %d, want 0; stderr: %s", code, p.stderr())
			}
			if dirs, _ := filepath.Glob(filepath.Join(tmp, "relaybench-relay-*")); len(dirs) != 0 {
				t.Errorf("temporary data dir left behind: %v", dirs)
			}
		})
	}
}

// TestRelayServeSignalIsItsStop: a server stopped by Ctrl-C or SIGTERM
// has done its job, as relays start's relay has: exit 0 and one line
// "relaybench relay: stopped (interrupt)", where it exited 130 after
// "relaybench relay: interrupt: stopping". Nothing is left running and its
// temporary data directory is gone.
func TestRelayServeSignalIsItsStop(t *testing.T) {
	for _, c := range []struct {
		name, line string
		send       func(*cliProc)
	}{
		{"SIGINT", "relaybench relay: stopped (interrupt)\n", (*cliProc).interrupt},
		{"SIGTERM", "relaybench relay: stopped (terminated)\n", (*cliProc).terminate},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			p := startChild(t, tmp, "relay", "serve", "--store", "native")
			url := listeningURL(t, p)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := nip11.WaitReady(ctx, url); err != nil {
				t.Fatal(err)
			}
			c.send(p)
			if code := p.exit(t, 30*time.Second); code != 0 {
				t.Fatalf("exit %d, want 0; stderr: %q", code, p.stderr())
			}
			if e := p.stderr(); e != c.line {
				t.Errorf("stderr %q, want %q", e, c.line)
			}
			left := processes(func(proc, cl string) bool {
				env, _ := os.ReadFile(filepath.Join(proc, "environ"))
				return strings.Contains(string(env), "TMPDIR="+tmp+"\x00")
			})
			if len(left) > 0 {
				t.Errorf("processes left running: %v", left)
			}
			if dirs, _ := filepath.Glob(filepath.Join(tmp, "relaybench-relay-*")); len(dirs) != 0 {
				t.Errorf("temporary data dir left behind: %v", dirs)
			}
		})
	}
}

// publishAndQuery sends one signed event, expects OK true, and (when the
// relay stores) gets it back by id.
func publishAndQuery(t *testing.T, ctx context.Context, url string, stores bool) {
	t.Helper()
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ev := gonostr.Event{CreatedAt: gonostr.Now(), Kind: 1, Tags: gonostr.Tags{{"t", "serve"}}, Content: "hello"}
	if err := ev.Sign(gonostr.GeneratePrivateKey()); err != nil {
		t.Fatal(err)
	}
	write := func(v ...any) {
		b, _ := json.Marshal(v)
		if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	read := func() []any {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m []any
		if err := json.Unmarshal(b, &m); err != nil || len(m) == 0 {
			t.Fatalf("malformed frame %q", b)
		}
		return m
	}
	write("EVENT", ev)
	if m := read(); len(m) < 3 || m[0] != "OK" || m[1] != ev.ID || m[2] != true {
		t.Fatalf("publish: got %v", m)
	}
	if !stores {
		return
	}
	write("REQ", "q", map[string]any{"ids": []string{ev.ID}})
	m := read()
	if m[0] != "EVENT" || len(m) < 3 {
		t.Fatalf("query: got %v", m)
	}
	if got, _ := m[2].(map[string]any); got["id"] != ev.ID {
		t.Fatalf("query: got %v", m)
	}
	if m := read(); m[0] != "EOSE" {
		t.Fatalf("query: got %v, want EOSE", m)
	}
}

func TestRelayServeRefusesNonLoopback(t *testing.T) {
	p := startChild(t, t.TempDir(), "relay", "serve", "--addr", "0.0.0.0:0", "--store", "memory")
	if code := p.exit(t, 20*time.Second); code != 2 {
		t.Errorf("exit %d, want code 2", code)
	}
	if !strings.Contains(p.stderr(), "--i-operate-this-relay") {
		t.Errorf("stderr %q does not name --i-operate-this-relay", p.stderr())
	}
}

func TestCheckLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:0": true, "127.3.4.5:7447": true, "[::1]:0": true, "localhost:80": true,
		"0.0.0.0:0": false, ":7447": false, "[::]:1": false, "192.168.1.2:7447": false, "example.com:80": false,
	} {
		if err := checkLoopback(addr, false); (err == nil) != ok {
			t.Errorf("%s: %v", addr, err)
		}
		if err := checkLoopback(addr, true); err != nil {
			t.Errorf("%s with --i-operate-this-relay: %v", addr, err)
		}
	}
	if err := checkLoopback("nonsense", true); err == nil {
		t.Error("malformed address accepted")
	}
}
