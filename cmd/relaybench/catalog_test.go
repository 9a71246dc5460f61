package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// checkRelayRun asserts a managed run of relay name published every event
// and passed query verification.
func checkRelayRun(t *testing.T, r results.Run, name string, events, queries int) {
	t.Helper()
	if r.Relay.Name != name || !r.Relay.Managed {
		t.Errorf("relay %+v, want managed %s", r.Relay, name)
	}
	pub, q := r.Phase("publish"), r.Phase("query")
	if pub == nil || q == nil {
		t.Fatalf("%s: phases %v", name, r.Phases)
	}
	if pub.Counts["accepted"] != int64(events) {
		t.Errorf("%s: accepted %d of %d (refused %v)", name, pub.Counts["accepted"], events, pub.Refused)
	}
	if v := q.Verification; !v.Passed || v.Checked != int64(queries) {
		t.Errorf("%s: verification %+v", name, v)
	}
}

func hasNote(r results.Run, want string) bool {
	for _, n := range r.Notes {
		if strings.Contains(n, want) {
			return true
		}
	}
	return false
}

// compareTwo runs compare with args, its results file and relay logs in
// out (a fresh corpus cache, the test anchor, no progress), and wants exit
// status 0 and a results file of two runs.
func compareTwo(t *testing.T, out string, args ...string) (cliResult, *results.File) {
	t.Helper()
	path := filepath.Join(out, "c.json")
	args = append(append([]string{"compare"}, args...), "--out", out, "--cache-dir", t.TempDir(), "--no-progress", "--anchor", testAnchor, "--json", path)
	res := runCLI(t, args...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	f := readResults(t, path)
	if len(f.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(f.Runs))
	}
	return res, f
}

// TestCompareCommandTemplate: "any relay without code": compare starts a
// relay from a command template (this relaybench's own relay serve), and a
// second one whose command holds a quoted comma, measures both like catalog
// relays and removes their data dirs.
func TestCompareCommandTemplate(t *testing.T) {
	bin := relaybenchBin(t)
	dataRoot := t.TempDir()
	t.Setenv("RELAYBENCH_DATA", dataRoot)
	out := t.TempDir()
	mine := "mine=" + bin + " relay serve --addr {host}:{port} --data-dir {dir} --store native"
	// sh gets the comma inside quotes: it must reach the command whole.
	quoted := `quoted=sh -c 'v="a,b"; test "$v" = "a,b" || exit 9; exec "$0" relay serve --addr "$1" --data-dir "$2" --store native' ` + bin + " {addr} {dir}"
	res, f := compareTwo(t, out, "-relays", mine+","+quoted, "-events", "200", "-queries", "12", "-concurrency", "4")
	for i, name := range []string{"mine", "quoted"} {
		r := f.Runs[i]
		checkRelayRun(t, r, name, 200, 12)
		if !hasNote(r, "started from a command template (no pinned version)") {
			t.Errorf("%s: notes %q lack the command template", name, r.Notes)
		}
		if !strings.Contains(res.stdout, name) {
			t.Errorf("summary does not name %s", name)
		}
		if r.Phase("publish").Resources == nil || r.Phase("publish").Resources.RelayDataBytes <= 0 {
			t.Errorf("%s: data dir not sampled: %+v", name, r.Phase("publish").Resources)
		}
	}
	// {dir} was a fresh dir under the data root, and it is gone.
	log, err := os.ReadFile(filepath.Join(out, "mine.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "--data-dir "+dataRoot+"/relaybench-run-mine-") {
		t.Errorf("log does not show the data dir under %s:\n%s", dataRoot, log)
	}
	wantEmptyDir(t, dataRoot)

	// run --relay takes a template too.
	path := filepath.Join(out, "r.json")
	res = runCLI(t, "run", "--relay", mine, "-events", "50", "-queries", "6", "--out", out, "--cache-dir", t.TempDir(),
		"--no-progress", "--quiet", "--anchor", testAnchor, "--json", path)
	if res.code != 0 {
		t.Fatalf("run: exit %d\n%s", res.code, res.stderr)
	}
	f = readResults(t, path)
	checkRelayRun(t, f.Runs[0], "mine", 50, 6)
	if _, ok := f.Runs[0].Params["store"]; ok {
		t.Errorf("params record the embedded relay's store for a template relay: %v", f.Runs[0].Params)
	}
	wantEmptyDir(t, dataRoot)
}

// Template mistakes are usage errors: one line naming the mistake, exit 2,
// before anything runs.
func TestCommandTemplateUsageErrors(t *testing.T) {
	out := t.TempDir()
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("[[relay]]\nname = 'x'\nversion = '1'\nkind = 'self'\nargs = ['{{.Bin}}']\ncolour = 'red'\n"), 0o644)
	cfg := filepath.Join(t.TempDir(), "relay.toml")
	os.WriteFile(cfg, []byte("port = {port}\n"), 0o644)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"compare", "--relays", "mine=sh -c x {prot}"}, []string{"relay mine", "unknown placeholder {prot}"}},
		{[]string{"compare", "--relays", "mine=sh --config {config}"}, []string{"{config}", "--relay-config mine=FILE"}},
		{[]string{"compare", "--relays", "mine=sh", "--relay-config", "other=" + cfg}, []string{"--relay-config other=", "no relay other=COMMAND"}},
		{[]string{"compare", "--relays", "mine=no-such-relay-program {port}"}, []string{`"no-such-relay-program" not found`}},
		{[]string{"compare", "--relays", "mine=sh -c x --ports 1,2"}, []string{`unknown relay "2"`, "must be quoted"}},
		{[]string{"compare", "--relays", "mine=sh a,mine=sh b"}, []string{"relay mine is given two commands"}},
		{[]string{"compare", "--relays", "khatru-memory", "--catalog", bad}, []string{"--catalog " + bad, "line 6", "unknown key relay.colour"}},
		{[]string{"run", "--relay", "mine=sh {nope}"}, []string{"unknown placeholder {nope}"}},
		{[]string{"run", "--relay", "nosuchrelay"}, []string{`unknown relay "nosuchrelay"`}},
		{[]string{"relays", "list", "--catalog", bad}, []string{"unknown key relay.colour"}},
		{[]string{"relays", "start", "mine=sh {nope}"}, []string{"unknown placeholder {nope}"}},
		{[]string{"compare", "--relays", "strfry", "--bin-dir", filepath.Join(out, "absent")}, []string{"--bin-dir", "absent"}},
	} {
		args := append(c.args, "--out", out)
		if c.args[0] == "relays" && c.args[1] == "list" {
			args = c.args
		}
		code, _, stderr := runHere(t, args...)
		if code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", c.args, code, stderr)
			continue
		}
		wantOneLine(t, stderr, c.want...)
	}
	wantEmptyDir(t, out)
}

// TestCompareCatalogFile: --catalog adds a relay and replaces a built-in
// one for one invocation.
func TestCompareCatalogFile(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "mine.toml")
	err := os.WriteFile(cat, []byte(`
[[relay]]
name = "my-memory"
description = "khatru's in-memory store under a name of mine"
version = "mine 1"
kind = "self"
args = ["{{.Bin}}", "relay", "serve", "--addr", "{{.Addr}}", "--data-dir", "{{.DataDir}}", "--store", "memory"]
notes = "added by a catalog file"

# The built-in khatru-badger, replaced: the memory store instead.
[[relay]]
name = "khatru-badger"
version = "replaced"
kind = "self"
args = ["{{.Bin}}", "relay", "serve", "--addr", "{{.Addr}}", "--data-dir", "{{.DataDir}}", "--store", "memory"]
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	_, f := compareTwo(t, out, "-relays", "my-memory,khatru-badger", "--catalog", cat, "-events", "100", "-queries", "6", "--quiet")
	for i, name := range []string{"my-memory", "khatru-badger"} {
		r := f.Runs[i]
		checkRelayRun(t, r, name, 100, 6)
		// The relay's own NIP-11 says which store it runs: memory for both.
		if !strings.Contains(r.Relay.Software, "memory") {
			t.Errorf("%s: software %q: the catalog file's args were not used", name, r.Relay.Software)
		}
		if !hasNote(r, "catalog entry from "+cat) {
			t.Errorf("%s: notes %q do not say where the entry comes from", name, r.Notes)
		}
	}
	// relays list shows both, marked with their file.
	res := runCLI(t, "relays", "list", "--catalog", cat)
	if res.code != 0 {
		t.Fatalf("relays list: exit %d: %s", res.code, res.stderr)
	}
	for _, want := range []string{"my-memory", "mine 1", "replaced", "[from " + cat + "]"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("relays list lacks %q:\n%s", want, res.stdout)
		}
	}
}

// TestCompareBinDir: --bin-dir supplies strfry's binary; relays list says
// where each binary comes from.
func TestCompareBinDir(t *testing.T) {
	dir := sharedBinDir(t)
	t.Setenv("RELAYBENCH_STRFRY_BIN", "")
	res := runCLI(t, "relays", "list", "--bin-dir", dir)
	if res.code != 0 {
		t.Fatalf("relays list: exit %d: %s", res.code, res.stderr)
	}
	for _, line := range strings.Split(res.stdout, "\n") {
		if strings.HasPrefix(line, "strfry ") && !strings.Contains(line, "yes "+dir+"/strfry (--bin-dir "+dir+")") {
			t.Errorf("relays list: %s", line)
		}
		if strings.HasPrefix(line, "khatru-badger ") && !strings.Contains(line, "(relaybench itself)") {
			t.Errorf("relays list: %s", line)
		}
	}
	res, f, _ := runRecorded(t, relaybenchBin(t), "compare", "-relays", "strfry", "--bin-dir", dir, "-events", "100", "-queries", "6",
		"--cache-dir", t.TempDir(), "--quiet", "--anchor", testAnchor)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	checkRelayRun(t, f.Runs[0], "strfry", 100, 6)
	if !strings.Contains(f.Runs[0].Relay.Software, "strfry") {
		t.Errorf("software %q", f.Runs[0].Relay.Software)
	}
}
