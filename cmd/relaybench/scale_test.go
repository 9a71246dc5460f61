package main

import "testing"

// More connections than the open-file limit can ever allow: a one-line
// usage error naming the limit and ulimit -n, before any relay starts.
func TestSubscribeFileLimitUsageError(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := runHere(t, "subscribe", "--subscribers", "5000000", "--out", out, "--no-progress")
	if code != 2 {
		t.Fatalf("exit %d, want 2 (usage); stderr %q", code, stderr)
	}
	wantOneLine(t, stderr, "open-file limit", "ulimit -n", "5,000,002 connections")
	wantEmptyDir(t, out)
}

func TestSubscribeSourceAddrsUsageError(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := runHere(t, "subscribe", "--source-addrs", "127.0.0.9-127.0.0.2", "--out", out, "--no-progress")
	if code != 2 {
		t.Fatalf("exit %d, want 2 (usage); stderr %q", code, stderr)
	}
	wantOneLine(t, stderr, "--source-addrs", "127.0.0.9-127.0.0.2")
}
