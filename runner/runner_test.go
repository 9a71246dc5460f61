package runner

import (
	"runtime"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

func TestCheckTarget(t *testing.T) {
	for _, ok := range []string{"ws://127.0.0.1:7777", "ws://127.8.9.10:1/path", "ws://localhost:7447", "ws://[::1]:7447", "wss://127.0.0.1"} {
		if err := CheckTarget(ok, false); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"ws://192.0.2.1:7777", "wss://relay.example.com", "ws://10.0.0.1", "ws://128.0.0.1"} {
		err := CheckTarget(bad, false)
		if err == nil || !strings.Contains(err.Error(), "--i-operate-this-relay") {
			t.Errorf("%s not refused: %v", bad, err)
		}
		if err := CheckTarget(bad, true); err != nil {
			t.Errorf("%s refused despite the flag: %v", bad, err)
		}
	}
	for _, malformed := range []string{"http://127.0.0.1", "127.0.0.1:7777", "ws://", "ws://%zz"} {
		if err := CheckTarget(malformed, true); err == nil {
			t.Errorf("%q accepted", malformed)
		}
	}
}

func phase(secs, client, relay float64) *results.Phase {
	return &results.Phase{Duration: int64(secs * 1e9), Resources: &results.Resources{ClientCPUSecs: client * secs, RelayCPUSecs: relay * secs}}
}

func TestJudgeClient(t *testing.T) {
	machine := float64(runtime.NumCPU())
	cores := runtime.GOMAXPROCS(0)
	// The client kept all its cores busy: its figure, not the relay's.
	ph := phase(10, 0.95*float64(cores), 0.2)
	judgeClient(ph, cores)
	if !ph.ClientLimited || !strings.Contains(strings.Join(ph.Notes, " "), "client-limited") {
		t.Fatalf("busy client not flagged: %+v", ph)
	}
	// A busy relay with an idle client is the relay's figure.
	ph = phase(10, 0.1, 0.9)
	judgeClient(ph, cores)
	if ph.ClientLimited || !strings.Contains(strings.Join(ph.Notes, " "), "relay-limited") {
		t.Fatalf("busy relay: %+v", ph.Notes)
	}
	if machine >= 2 {
		// Saturated machine, client the bigger user: client-limited.
		ph = phase(10, machine*0.5, machine*0.45)
		judgeClient(ph, 0)
		if !ph.ClientLimited {
			t.Fatalf("saturated machine with client ≥ relay not flagged: %+v", ph.Notes)
		}
	}
	// An unobserved relay: only the client's CPU is known, and said so.
	ph = phase(10, 0.3, 0)
	judgeClient(ph, cores)
	if ph.ClientLimited || !strings.Contains(strings.Join(ph.Notes, " "), "relay CPU unknown") {
		t.Fatalf("unobserved relay: %+v", ph.Notes)
	}
	if got := ph.Resources.ClientCPUUtil; got <= 0 || got > 1 {
		t.Fatalf("client utilisation %v", got)
	}
}
