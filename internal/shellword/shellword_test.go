package shellword

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// args a shell would split, expand or redirect if they were not quoted.
var awkward = []string{
	"run", "--relay", "ws://127.0.0.1:{port}", "--threshold", "publish.p99_ms<50",
	"--label", "it's mine", "", "a b\tc", "$HOME", "~/x", "*", "a;b|c&d", "`id`", `"q"`, `back\slash`,
	"{a,b}", "x'y'z", "'", "--relays=strfry,embedded", "ünïcode", "#not-a-comment", "!", "=ls",
}

func TestQuotePlainWordsBare(t *testing.T) {
	for _, w := range []string{"run", "--relay", "ws://127.0.0.1:7447", "--events=100", "a,b", "50%", "user@host", "+1"} {
		if got := Quote(w); got != w {
			t.Errorf("Quote(%q) = %q, want it bare", w, got)
		}
	}
	if got := Quote("it's"); got != `'it'\''s'` {
		t.Errorf(`Quote("it's") = %s, want 'it'\''s'`, got)
	}
}

// TestJoinRoundTripsThroughShell pastes the joined line into sh (and bash
// when there is one): the shell must give back the very arguments.
func TestJoinRoundTripsThroughShell(t *testing.T) {
	line := Join(awkward)
	for _, sh := range []string{"sh", "bash"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			t.Logf("%s: not installed, not tried", sh)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
		out, err := exec.CommandContext(ctx, path, "-c", `printf '%s\0' `+line).Output()
		cancel()
		if err != nil {
			t.Fatalf("%s -c: %v", sh, err)
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if !slices.Equal(got, awkward) {
			t.Errorf("%s split %s\ninto %q\nwant %q", sh, line, got, awkward)
		}
	}
}
