package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/internal/testrelay"
)

// TestHostileRelayStringsStayInert: a relay whose NIP-11 name, software
// and version and whose OK and CLOSED reasons hold HTML, Markdown table
// pipes, links and terminal escapes. The terminal summary shows no escape
// sequence; the Markdown report has no raw tag, link or extra column; the
// CSV no formula; the JUnit XML no control character.
func TestHostileRelayStringsStayInert(t *testing.T) {
	hostile := "<img src=x onerror=alert(1)>|x|[a](javascript:b)\x1b[2J"
	r := testrelay.New(testrelay.Config{Verify: true, RefuseEvery: 5, RefuseReason: "blocked: <script>alert(1)</script> | col",
		NIP11: map[string]any{"name": hostile, "software": "<script>s</script>", "version": "=1+2|`v`\x1b]0;t\a"}})
	defer r.Close()
	out := t.TempDir()
	path, junit := filepath.Join(out, "r.json"), filepath.Join(out, "junit.xml")
	res := runCLI(t, "run", "--events", "50", "--queries", "6", "--concurrency", "2", "--timeout", "5s", "--relay", r.URL(),
		"--cache-dir", t.TempDir(), "--out", out, "--json", path, "--no-progress", "--junit", junit)
	if strings.ContainsAny(res.stdout, "\x1b\a") {
		t.Errorf("the summary holds a terminal control character:\n%q", res.stdout)
	}
	if !strings.Contains(res.stdout, "<script>s</script>") {
		t.Errorf("the summary lacks the relay's software (shown as text)")
	}
	md := runCLI(t, "report", path, "--format", "md")
	if md.code != 0 {
		t.Fatalf("report --format md: exit %d: %s", md.code, md.stderr)
	}
	for _, bad := range []string{"<script", "<img", "[a](", "\x1b", "\a"} {
		if strings.Contains(md.stdout, bad) {
			t.Errorf("the Markdown report holds %q raw", bad)
		}
	}
	relays := tableAfter(md.stdout, "### Relays")
	if len(relays) < 3 {
		t.Fatalf("no Relays table in:\n%s", md.stdout)
	}
	want := cols(relays[0])
	for _, row := range relays[2:] {
		if cols(row) != want {
			t.Errorf("Relays row has %d columns, header %d: %s", cols(row), want, row)
		}
	}
	csv := runCLI(t, "report", path, "--format", "csv")
	for _, line := range strings.Split(csv.stdout, "\n") {
		for _, cell := range strings.Split(line, ",") {
			if strings.HasPrefix(strings.TrimPrefix(cell, `"`), "=") {
				t.Errorf("CSV cell starts a formula: %s", cell)
			}
		}
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range string(x) {
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			t.Fatalf("JUnit XML holds control character %q", c)
		}
	}
}

// tableAfter returns the lines of the Markdown table under heading.
func tableAfter(md, heading string) []string {
	_, rest, ok := strings.Cut(md, heading+"\n")
	if !ok {
		return nil
	}
	var rows []string
	for _, l := range strings.Split(strings.TrimLeft(rest, "\n"), "\n") {
		if !strings.HasPrefix(l, "|") {
			break
		}
		rows = append(rows, l)
	}
	return rows
}

// cols counts a Markdown table row's unescaped pipes.
func cols(row string) int { return strings.Count(row, "|") - strings.Count(row, `\|`) }
