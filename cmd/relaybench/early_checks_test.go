package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBinCheckedUpFront: a --bin path that is missing, a folder or not
// executable is a usage error (exit 2, one line naming it) before anything
// runs: the results folder stays empty, where the relay before it used to
// run --repeat times first.
func TestBinCheckedUpFront(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "missing"), "no such file"},
		{dir, "not a regular file"},
		{plain, "not executable"},
	} {
		out := t.TempDir()
		code, _, stderr := runHere(t, "compare", "-relays", "khatru-badger,strfry", "--bin", "strfry="+tc.path,
			"--repeat", "5", "--events", "10", "--queries", "1", "--cache-dir", "off", "--out", out, "--no-progress")
		if code != 2 {
			t.Fatalf("--bin strfry=%s: exit %d, want 2\n%s", tc.path, code, stderr)
		}
		wantOneLine(t, stderr, "--bin strfry="+tc.path, tc.want)
		wantEmptyDir(t, out)
	}
}

// noStrfry makes sure strfry has no binary here: no bin dir, no env.
func noStrfry(t *testing.T) {
	t.Setenv("RELAYBENCH_BIN_DIR", "")
	t.Setenv("RELAYBENCH_STRFRY_BIN", "")
}

// TestCompareSaysSkipFirst: a catalog relay without its binary is named
// in the first line, before the corpus is signed, and still skipped at
// its turn.
func TestCompareSaysSkipFirst(t *testing.T) {
	noStrfry(t)
	_, stdout, stderr := runHere(t, "compare", "-relays", "strfry", "--events", "300", "--queries", "1",
		"--cache-dir", "off", "--out", t.TempDir())
	lines := strings.Split(stderr, "\n")
	if !strings.HasPrefix(lines[0], "strfry will be skipped: it needs a binary you supply") {
		t.Fatalf("first line %q, want strfry will be skipped: it needs a binary you supply\n%s", lines[0], stderr)
	}
	if signingAt(stderr) < 0 || !strings.Contains(stderr, "\nstrfry: skipped, as said at the start\n") {
		t.Fatalf("want the corpus signed and the skip at strfry's turn too:\n%s", stderr)
	}
	// Standard error says why once, the first line: main's verdict line
	// there names the skip. The summary, on its own output (stdout), says
	// it once too: in its verdict, its Relay line pointing there.
	if n := strings.Count(stderr, "needs a binary"); n != 1 || !strings.Contains(stderr, "relaybench: ERROR: not run: strfry (skipped, as said at the start)\n") {
		t.Fatalf("why strfry is skipped said %d times on stderr, want 1, and the verdict line naming the skip:\n%s", n, stderr)
	}
	if n := strings.Count(stdout, "needs a binary"); n != 1 || !strings.Contains(stdout, "  Relay:    strfry: skipped (the verdict says why)\n") ||
		!strings.Contains(stdout, "  - not run: strfry needs a binary you supply") {
		t.Fatalf("why strfry is skipped said %d times in the summary, want 1, in its verdict:\n%s", n, stdout)
	}
}

// TestCompareSkipSaidOnceOneStream: with stdout and stderr on one file (a
// terminal), why a relay is skipped is said once, at the start: the
// summary's Relay line, run block and verdict name the skip "as said at
// the start", and the verdict line is not repeated after the summary that
// ends with it.
func TestCompareSkipSaidOnceOneStream(t *testing.T) {
	noStrfry(t)
	f, err := os.Create(filepath.Join(t.TempDir(), "both"))
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = f, f
	code := func() int {
		defer func() { os.Stdout, os.Stderr = oldOut, oldErr }()
		return run([]string{"compare", "-relays", "strfry", "--events", "300", "--queries", "1",
			"--cache-dir", "off", "--out", t.TempDir(), "--no-progress"})
	}()
	f.Close()
	b, _ := os.ReadFile(f.Name())
	all := string(b)
	if code != 1 || strings.Contains(all, "relaybench: ERROR") || strings.Count(all, "Verdict: ERROR (exit 1)") != 1 {
		t.Fatalf("exit %d, want 1 with one verdict line and no relaybench: ERROR line:\n%s", code, all)
	}
	if n := strings.Count(all, "needs a binary"); n != 1 || !strings.HasPrefix(all, "strfry will be skipped: it needs a binary") {
		t.Fatalf("why strfry is skipped said %d times, want 1 (the first line):\n%s", n, all)
	}
	for _, want := range []string{"\n  Relay:    strfry: skipped, as said at the start\n", "\nSKIPPED, as said at the start\n",
		"\nVerdict: ERROR (exit 1)\n  - not run: strfry (skipped, as said at the start)\n"} {
		if !strings.Contains(all, want) {
			t.Errorf("the summary lacks %q:\n%s", want, all)
		}
	}
}

// signingAt is the line number of the first "Signing N events" line of
// stderr, -1 without one.
func signingAt(stderr string) int {
	for i, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "Signing ") {
			return i
		}
	}
	return -1
}

// closedURL is a ws:// URL on 127.0.0.1 where nothing listens.
func closedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "ws://" + ln.Addr().String()
	ln.Close()
	return url
}

// TestRelayCheckedBeforeSigning: an unreachable --relay URL and a --relay
// without its binary end the run with the messages and exit status of
// before, but before the corpus is signed: no "Signing" line, nothing in
// the corpus cache.
func TestRelayCheckedBeforeSigning(t *testing.T) {
	noStrfry(t)
	url := closedURL(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--relay", url}, "ERROR: dial " + url + ": unreachable"},
		{[]string{"sync", "--relay", url}, "ERROR: dial " + url + ": unreachable"},
		{[]string{"sync", "--relay", "strfry"}, "relaybench: strfry needs a binary you supply, and no package registry has it: build it"}, // nothing else runs: not "skipped"
	} {
		cache, out := t.TempDir(), t.TempDir()
		args := append(tc.args, "--events", "3000", "--cache-dir", cache, "--out", out)
		code, _, stderr := runHere(t, args...)
		if code != 1 || !strings.Contains(stderr, tc.want) || signingAt(stderr) >= 0 {
			t.Fatalf("%v: exit %d, want 1 with %q and no Signing line\n%s", tc.args, code, tc.want, lastLines(stderr, 20))
		}
		wantEmptyDir(t, cache)
	}
}

// TestStartAtWaitSaid: a run waiting for --start-at says so, with the
// time, before it waits (plain line with --no-progress, a progress phase
// otherwise), and no "Publishing ..." line comes before it (the phase has
// not begun); interrupted while waiting, it ends as a Ctrl-C does.
func TestStartAtWaitSaid(t *testing.T) {
	t.Parallel() // beside the package's other parallel tests: it waits for a line, then interrupts: nothing shared
	for _, extra := range [][]string{{"--no-progress"}, nil} {
		out := t.TempDir()
		args := append([]string{"run", "--events", "10", "--queries", "1", "--start-at", "+10m",
			"--cache-dir", "off", "--out", out}, extra...)
		p := startCLI(t, args...)
		p.until(t, func(l string) bool {
			return strings.HasPrefix(l, "Waiting until ") && strings.HasSuffix(l, " for --start-at...")
		}, 2*time.Minute, "the waiting line")
		if i := strings.Index(p.stderr(), "Publishing "); i >= 0 && i < strings.Index(p.stderr(), "Waiting until ") {
			t.Errorf("%v: the publish phase is said before the wait for --start-at:\n%s", extra, p.stderr())
		}
		p.interrupt()
		if code := p.exit(t, time.Minute); code != 130 {
			t.Fatalf("%v: exit %d, want 130\n%s", extra, code, p.stderr())
		}
	}
}
