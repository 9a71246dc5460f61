package report

import (
	"bytes"
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
)

// TestCommandLinePastesBack: the header's Command line and a merged file's
// Merged line quote the arguments a shell would split, expand or redirect
// (a {port} template, a threshold's <, a label with a space and a '), so
// the line pasted into sh gives relaybench the very arguments again.
// A merged file's Command line is segment 0's (--segment 0/2: a newcomer
// pasted "--segment 'I/2 (I = 0, 1)'" and got exit 2), and its Merged
// line says what the other segment ran.
func TestCommandLinePastesBack(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("sh: not installed")
	}
	args := []string{"run", "--relay", "ws://127.0.0.1:{port}", "--threshold", "publish.p99_ms<50", "--label", "it's a test", "--events", "100", "--segment", "0/2"}
	merge := []string{"merge", "-o", "a b.json", "seg 0.json", "seg;1.json"}
	f := &results.File{Tool: results.Tool{Name: "relaybench"}, Command: "run", Args: args,
		StartedAt: time.Unix(0, 0), FinishedAt: time.Unix(10, 0),
		Merged: &results.Merged{Segments: 2, Command: merge}}
	var b bytes.Buffer
	if err := Summary(&b, f); err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(b.String(), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
		if ok && (k == "Command" || k == "Merged") && lines[k] == "" {
			lines[k] = strings.TrimSpace(v)
		}
	}
	merged, rest, _ := strings.Cut(strings.TrimPrefix(lines["Merged"], "from 2 segments ("), ")")
	if !strings.HasPrefix(rest, "; the Command line is segment 0's; the other segment ran it with --segment 1/2;") {
		t.Errorf("the Merged line does not say whose the Command line is and what the other segment ran: %q", lines["Merged"])
	}
	for _, c := range []struct {
		line string
		want []string
	}{{lines["Command"], append([]string{"relaybench"}, args...)}, {merged, append([]string{"relaybench"}, merge...)}} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
		out, err := exec.CommandContext(ctx, sh, "-c", `printf '%s\0' `+c.line).Output()
		cancel()
		if err != nil {
			t.Fatalf("sh -c printf %s: %v", c.line, err)
		}
		if got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00"); !slices.Equal(got, c.want) {
			t.Errorf("the summary's %q splits in sh into %q, want %q\n%s", c.line, got, c.want, b.String())
		}
	}
}
