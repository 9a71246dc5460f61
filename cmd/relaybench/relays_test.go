package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/relay/sink"
)

// TestRelaysListFitsATerminal: relays list is a table of what is installed
// and from where, then each relay's notes and install hint wrapped to 100
// columns, the hint of a relay without its binary included; in one table
// its lines were hundreds of columns wide.
func TestRelaysListFitsATerminal(t *testing.T) {
	noStrfry(t)
	code, stdout, stderr := runHere(t, "relays", "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if h := strings.Fields(lines[0]); strings.Join(h, " ") != "NAME KIND VERSION INSTALLED" {
		t.Fatalf("header %q", lines[0])
	}
	for _, l := range lines {
		// A table row of an installed relay holds its binary's path.
		if n := len([]rune(l)); n > 100 && !strings.Contains(l, " yes ") {
			t.Errorf("%d columns: %q", n, l)
		}
	}
	var strfryRow bool
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "strfry" {
			strfryRow = f[len(f)-1] == "no"
		}
	}
	if !strfryRow || !strings.Contains(stdout, "\nstrfry: not installed: it needs a binary you supply, and no package registry has it: build it") {
		t.Errorf("want strfry's row saying no and its install hint below:\n%s", stdout)
	}
}

// TestCatalogVersionsSayWhence: relays list says its versions are the
// catalog's and a run's come from the relay's NIP-11; the sink's catalog
// version is the one the sink answers in NIP-11 (it said khatru v0.19.1,
// which the sink does not use).
func TestCatalogVersionsSayWhence(t *testing.T) {
	code, stdout, stderr := runHere(t, "relays", "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(strings.Join(strings.Fields(stdout), " "), versionNote) {
		t.Errorf("relays list does not say where its versions come from:\n%s", stdout)
	}
	spec, err := harness.Lookup("sink")
	if err != nil {
		t.Fatal(err)
	}
	if want := "relaybench-sink " + sink.Version; spec.Version != want {
		t.Errorf("sink's catalog version %q, want %q (what its NIP-11 says)", spec.Version, want)
	}
}

func TestWrapText(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"a b c", "a b c"},
		{"aaaa bbbb cccc", "aaaa bbbb\n  cccc"},
		{"aaaaaaaaaaaa b", "aaaaaaaaaaaa\n  b"},
		{"", ""},
	} {
		if got := wrapText(c.in, 10, "  "); got != c.want {
			t.Errorf("wrapText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRelaysStartCtrlCIsItsStop: relays start says "Ctrl-C stops it.", so
// Ctrl-C is its way to stop, not an interruption: it printed "interrupted:
// stopping, saving what was measured" (nothing is measured) and exited 130.
func TestRelaysStartCtrlCIsItsStop(t *testing.T) {
	p := startCLI(t, "relays", "start", "khatru-memory", "--out", t.TempDir())
	p.await(t, func(stdout, _ string) bool { return strings.Contains(stdout, "Ctrl-C stops it.") }, 2*time.Minute, "the relay's start")
	p.interrupt()
	if code := p.exit(t, time.Minute); code != 0 {
		t.Fatalf("exit %d, want 0; stderr: %s", code, p.stderr())
	}
	if e := p.stderr(); strings.Contains(e, "interrupted") || strings.Contains(e, "measured") || !strings.Contains(e, "khatru-memory: stopping") {
		t.Errorf("stderr %q: want a plain stopping line", e)
	}
	if !strings.Contains(p.stdout(), "khatru-memory: stopped") {
		t.Errorf("stdout %q lacks the stop", p.stdout())
	}
	// A store that writes nothing shows no data folder to look in.
	if out := p.stdout(); !strings.Contains(out, "\ndata: none (an in-memory store: nothing reaches disk)\n") || strings.Contains(out, "/data") {
		t.Errorf("stdout %q: want no data folder for the memory store", out)
	}
}

// TestRelaysStartBinaryRelayOneSentence: relays start, run and sync of a
// relay without its binary say in one sentence what is missing and how to
// get it, as relays install does, without the stacked prefixes of before
// ("strfry: no binary: strfry is on no package registry: …"), and exit 1.
func TestRelaysStartBinaryRelayOneSentence(t *testing.T) {
	noStrfry(t)
	const want = "relaybench: strfry needs a binary you supply, and no package registry has it: build it from its source, https://github.com/hoytech/strfry (checked here at f8a56a8; C++ with LMDB), then pass --bin strfry=PATH, --bin-dir DIR or set RELAYBENCH_STRFRY_BIN\n"
	for _, args := range [][]string{
		{"relays", "start", "strfry", "--out", t.TempDir()},
		{"run", "--relay", "strfry", "--events", "5", "--queries", "1", "--cache-dir", "off", "--out", t.TempDir(), "--quiet"},
	} {
		code, _, stderr := runHere(t, args...)
		if code != 1 || stderr != want {
			t.Errorf("%v: exit %d, stderr\n%q\nwant exit 1 and\n%q", args, code, stderr, want)
		}
	}
}

// relays install of a relay relaybench does not build (strfry: a binary
// the user supplies) says so in one line, with how to get it, and fails;
// "skipped" is compare's word, and a second "install failed" line said
// nothing more for one relay.
func TestRelaysInstallBinaryRelaySaysHowToGetIt(t *testing.T) {
	noStrfry(t)
	code, _, stderr := runHere(t, "relays", "install", "strfry")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	wantOneLine(t, stderr, "relaybench: strfry cannot be installed: it needs a binary you supply, and no package registry has it: build it from its source, https://github.com/hoytech/strfry",
		", then pass --bin strfry=PATH, --bin-dir DIR",                        // one wording with relays start, run and sync
		" when you start it (relays start, run --relay, compare --relays, …)") // not to relays install, which has nothing to build
	if strings.Contains(stderr, "no binary") || strings.Count(stderr, ": ") > 3 {
		t.Errorf("prefixes stacked: %s", stderr)
	}
	if strings.Contains(stderr, "skipped") {
		t.Errorf("says skipped, where nothing else runs: %s", stderr)
	}
}

// TestRelaysInstallNothingToBuild: relays install of a relay whose binary
// is here and not built by it (one the user gives with --bin, relaybench
// itself) says there is nothing to build, where it said "installed" with
// the time of a build that never happened.
func TestRelaysInstallNothingToBuild(t *testing.T) {
	noStrfry(t)
	bin := filepath.Join(t.TempDir(), "strfry")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"relays", "install", "strfry", "--bin", "strfry=" + bin}, "strfry: prebuilt: " + bin + " (from --bin); nothing to build\n"},
		{[]string{"relays", "install", "embedded"}, "embedded: runs in relaybench itself (" + self + "); nothing to build\n"},
	} {
		code, stdout, stderr := runHere(t, tc.args...)
		if code != 0 || stdout != tc.want || stderr != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 0 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}
