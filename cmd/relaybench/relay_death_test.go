package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A relay relaybench started that dies in the middle of a live phase is
// reported as dead, with its exit status, as the reason the work stopped
// (exit 4), not only as lost connections.
func TestLiveCommandReportsRelayDeath(t *testing.T) {
	bin := relaybenchBin(t)
	tmp := t.TempDir()
	script := filepath.Join(tmp, "dying-relay.sh")
	// the relay serves for 6 s (signing 15,000 fresh events and opening the
	// subscriptions take about 1 s), then dies
	body := "#!/bin/sh\n\"" + bin + "\" relay serve --store memory --addr \"$1\" &\npid=$!\nsleep 6\nkill -KILL $pid\nwait $pid\nexit 134\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "out.json")
	cmd := exec.Command(bin, "subscribe", "--relay", "dying="+script+" {host}:{port}", "--subscribers", "4",
		"--rate", "500", "--duration", "30s", "--timeout", "5s", "--grace", "1s",
		"--cache-dir", filepath.Join(tmp, "cache"), "--out", tmp, "--json", out, "--no-progress", "--quiet")
	msg, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 4 {
		t.Fatalf("exit %d, want 4:\n%s", code, msg)
	}
	var f struct {
		Verdict struct {
			Reasons []string `json:"reasons"`
		} `json:"verdict"`
		Runs []struct {
			Phases []struct {
				Aborted string `json:"aborted"`
			} `json:"phases"`
		} `json:"runs"`
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != 1 || len(f.Runs[0].Phases) == 0 || !strings.Contains(f.Runs[0].Phases[0].Aborted, "exit status 134") {
		t.Fatalf("phase not marked with the relay's death: %s", raw)
	}
	if !strings.Contains(strings.Join(f.Verdict.Reasons, "; "), "relay died") {
		t.Fatalf("verdict does not name the relay's death: %v", f.Verdict.Reasons)
	}
}
