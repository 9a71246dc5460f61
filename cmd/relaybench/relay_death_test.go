package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// A relay relaybench started that dies in the middle of a live phase is
// reported as dead, with its exit status, as the reason the work stopped
// (exit 4), not only as lost connections.
func TestLiveCommandReportsRelayDeath(t *testing.T) {
	t.Parallel() // beside the package's other parallel tests: the relay is killed once it holds 100 events, whenever that is
	bin := relaybenchBin(t)
	tmp := t.TempDir()
	script := filepath.Join(tmp, "dying-relay.sh")
	pidFile, addrFile := filepath.Join(tmp, "relay.pid"), filepath.Join(tmp, "relay.addr")
	// The relay serves until the test kills it, then its wrapper exits 134.
	body := "#!/bin/sh\n\"" + bin + "\" relay serve --store memory --addr \"$1\" &\npid=$!\necho $pid > " + pidFile +
		"\necho \"$1\" > " + addrFile + "\nwait $pid\nexit 134\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "out.json")
	// Kill the relay once it holds 100 of the phase's fresh events: the phase
	// is publishing then, however slow the machine is.
	go killWhenStored(t, pidFile, addrFile, 100)
	p := startCLI(t, "subscribe", "--relay", "dying="+script+" {host}:{port}", "--subscribers", "4",
		"--rate", "500", "--duration", "60s", "--timeout", "5s", "--grace", "1s",
		"--cache-dir", filepath.Join(tmp, "cache"), "--out", tmp, "--json", out, "--no-progress", "--quiet")
	if code := p.exit(t, 5*time.Minute); code != 4 {
		t.Fatalf("exit %d, want 4:\n%s%s", code, p.stdout(), p.stderr())
	}
	f := readResults(t, out)
	if len(f.Runs) != 1 || len(f.Runs[0].Phases) == 0 || !strings.Contains(f.Runs[0].Phases[0].Aborted, "exit status 134") {
		t.Fatalf("phase not marked with the relay's death: %+v", f.Runs)
	}
	if f.Verdict == nil || !strings.Contains(strings.Join(f.Verdict.Reasons, "; "), "relay died") {
		t.Fatalf("verdict does not name the relay's death: %+v", f.Verdict)
	}
}

// killWhenStored waits for the relay whose pid and address the wrapper
// script wrote to hold n events, then kills it with SIGKILL. It gives up
// after two minutes (the test then fails on the exit status).
func killWhenStored(t *testing.T, pidFile, addrFile string, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		pidB, err1 := os.ReadFile(pidFile)
		addrB, err2 := os.ReadFile(addrFile)
		pid, err3 := strconv.Atoi(strings.TrimSpace(string(pidB)))
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		if storedEvents(ctx, "ws://"+strings.TrimSpace(string(addrB)), n) >= n {
			syscall.Kill(pid, syscall.SIGKILL)
			return
		}
	}
}

// storedEvents asks a relay for up to n events and counts what it returns
// before EOSE (0 on any error).
func storedEvents(ctx context.Context, url string, n int) int {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return 0
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 24)
	if err := c.Write(ctx, websocket.MessageText, []byte(fmt.Sprintf(`["REQ","probe",{"limit":%d}]`, n))); err != nil {
		return 0
	}
	got := 0
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			return 0
		}
		switch {
		case bytes.HasPrefix(msg, []byte(`["EVENT"`)):
			got++
		case bytes.HasPrefix(msg, []byte(`["EOSE"`)):
			return got
		}
	}
}
