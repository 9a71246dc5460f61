package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/fiatjaf/eventstore/slicestore"
	"github.com/fiatjaf/khatru"
	"github.com/nbd-wtf/go-nostr"

	"github.com/relaybench/relaybench/internal/testkit"
)

// The test binary doubles as two helper programs, selected by its first
// arguments:
//
//	relay serve --addr A --data-dir D --store memory|sink
//	    a khatru relay, the stand-in for "relaybench relay serve" when the
//	    relaybench binary cannot be built yet;
//	harness-helper SELFBIN SPEC
//	    a parent that starts a relay through the harness, prints
//	    "ready PGID RUNDIR" and stops everything on SIGINT.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "relay" && os.Args[2] == "serve" {
		os.Exit(testServe(os.Args[3:]))
	}
	if len(os.Args) > 3 && os.Args[1] == "harness-helper" {
		os.Exit(testHelper(os.Args[2], os.Args[3]))
	}
	code := m.Run()
	testkit.RemoveRelaybench()
	os.Exit(code)
}

func testServe(args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "")
	dataDir := fs.String("data-dir", "", "")
	store := fs.String("store", "memory", "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	relay := khatru.NewRelay()
	switch *store {
	case "memory":
		st := &slicestore.SliceStore{}
		st.Init()
		relay.StoreEvent = append(relay.StoreEvent, st.SaveEvent)
		relay.QueryEvents = append(relay.QueryEvents, st.QueryEvents)
	case "sink":
		relay.StoreEvent = append(relay.StoreEvent, func(context.Context, *nostr.Event) error { return nil })
	default:
		fmt.Fprintf(os.Stderr, "test relay: store %q not supported\n", *store)
		return 2
	}
	_ = dataDir // the memory and sink stores keep nothing on disk
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "test relay: %v\n", err)
		return 1
	}
	fmt.Printf("listening ws://%s\n", ln.Addr())
	srv := &http.Server{Handler: relay}
	go srv.Serve(ln)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	return 0
}

func testHelper(selfBin, specName string) int {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT)
	var spec Spec
	if specName == "group" {
		spec = groupSpec(2 * time.Second)
	} else {
		var err error
		if spec, err = Lookup(specName); err != nil {
			fmt.Println("error", err)
			return 1
		}
	}
	inst, err := StartSpec(context.Background(), spec, StartOptions{SelfBin: selfBin, BaseDir: os.Getenv("HELPER_LOGS")})
	if err != nil {
		fmt.Println("error", oneLine(err))
		return 1
	}
	fmt.Printf("ready %d %s\n", inst.PID, inst.RunDir)
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := StopAll(ctx); err != nil {
		fmt.Println("error", oneLine(err))
		return 1
	}
	fmt.Println("stopped")
	return 0
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// groupSpec is a relay whose command leaves a child that ignores SIGTERM in
// the relay's process group, so only SIGKILL to the group stops it.
func groupSpec(grace time.Duration) Spec {
	return Spec{
		Name: "group-test", Version: "test", Kind: KindSelf,
		Args: []string{"/bin/sh", "-c",
			`(trap "" TERM; exec sleep 1000) & exec "$0" relay serve --addr "$1" --data-dir "$2" --store memory`,
			"{{.Bin}}", "{{.Addr}}", "{{.DataDir}}"},
		Grace: grace.String(),
	}
}

var (
	selfOnce sync.Once
	selfPath string
)

// selfBin returns a binary that implements "relay serve": $RELAYBENCH_TEST_BIN,
// else relaybench built from this module when it builds and has the command,
// otherwise this test binary (see TestMain).
func selfBin(t *testing.T) string {
	t.Helper()
	selfOnce.Do(func() {
		if bin := os.Getenv("RELAYBENCH_TEST_BIN"); bin != "" {
			selfPath = bin // a relaybench binary built elsewhere
			return
		}
		bin, err := testkit.Relaybench()
		if err == nil {
			if err = exec.Command(bin, "relay", "serve", "--help").Run(); err == nil {
				selfPath = bin
				return
			}
			err = errors.New("it has no 'relay serve' command yet")
		} else {
			err = errors.New(firstLine(err.Error()))
		}
		fmt.Fprintf(os.Stderr, "harness tests: relaybench binary not usable (%v); using the test binary's own khatru relay\n", err)
		selfPath, _ = os.Executable()
	})
	return selfPath
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// A minimal Nostr client for the tests.

type client struct {
	t *testing.T
	c *websocket.Conn
}

func dial(t *testing.T, url string) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	c.SetReadLimit(1 << 24)
	t.Cleanup(func() { c.CloseNow() })
	return &client{t, c}
}

var testKey = nostr.GeneratePrivateKey()

func newEvent(t *testing.T, content string) nostr.Event {
	ev := nostr.Event{Kind: 1, CreatedAt: nostr.Now(), Content: content, Tags: nostr.Tags{}}
	if err := ev.Sign(testKey); err != nil {
		t.Fatal(err)
	}
	return ev
}

func (c *client) send(v ...any) {
	b, _ := json.Marshal(v)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.c.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *client) read() []json.RawMessage {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for {
		_, b, err := c.c.Read(ctx)
		if err != nil {
			c.t.Fatalf("read: %v", err)
		}
		var msg []json.RawMessage
		if json.Unmarshal(b, &msg) == nil && len(msg) > 0 {
			return msg
		}
	}
}

// publish sends ev and returns the relay's OK verdict and message.
func (c *client) publish(ev nostr.Event) (bool, string) {
	c.send("EVENT", ev)
	for {
		m := c.read()
		var typ, id string
		json.Unmarshal(m[0], &typ)
		if typ != "OK" || len(m) < 3 {
			continue
		}
		json.Unmarshal(m[1], &id)
		if id != ev.ID {
			continue
		}
		var ok bool
		var reason string
		json.Unmarshal(m[2], &ok)
		if len(m) > 3 {
			json.Unmarshal(m[3], &reason)
		}
		return ok, reason
	}
}

// query returns the ids of the events a REQ returns before EOSE.
func (c *client) query(filter nostr.Filter) []string {
	c.send("REQ", "q", filter)
	var ids []string
	for {
		m := c.read()
		var typ string
		json.Unmarshal(m[0], &typ)
		switch typ {
		case "EVENT":
			var ev nostr.Event
			json.Unmarshal(m[2], &ev)
			ids = append(ids, ev.ID)
		case "EOSE":
			c.send("CLOSE", "q")
			return ids
		case "CLOSED":
			c.t.Fatalf("query closed: %s", m)
		}
	}
}

// readLine reads one line from r within d.
func readLine(t *testing.T, r *bufio.Reader, d time.Duration) string {
	t.Helper()
	ch := make(chan string, 1)
	go func() {
		s, _ := r.ReadString('\n')
		ch <- strings.TrimSpace(s)
	}()
	select {
	case s := <-ch:
		return s
	case <-time.After(d):
		t.Fatalf("no line within %v", d)
		return ""
	}
}
