package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, text string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

const userCatalog = `
[[relay]]
name = "my-memory"
version = "1.0"
kind = "self"
args = ["{{.Bin}}", "relay", "serve", "--addr", "{{.Addr}}", "--data-dir", "{{.DataDir}}", "--store", "memory"]

[[relay]]
name = "khatru-badger"
version = "override"
kind = "self"
args = ["{{.Bin}}", "relay", "serve", "--addr", "{{.Addr}}", "--data-dir", "{{.DataDir}}", "--store", "sink"]
`

func TestCatalogFileAddsAndOverrides(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "mine.toml", userCatalog, 0o644)
	over, err := ParseCatalogFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(over) != 2 || over[0].Origin() != path {
		t.Fatalf("parsed %d specs, origin %q", len(over), over[0].Origin())
	}
	builtin, _ := Catalog()
	specs, err := LoadCatalog(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != len(builtin)+1 {
		t.Fatalf("merged %d specs, want %d", len(specs), len(builtin)+1)
	}
	// The override keeps its place and replaces the entry whole.
	for i, s := range builtin {
		if specs[i].Name != s.Name {
			t.Fatalf("entry %d is %s, want %s: order changed", i, specs[i].Name, s.Name)
		}
	}
	kb, err := specs.Lookup("khatru-badger")
	if err != nil {
		t.Fatal(err)
	}
	if kb.Version != "override" || kb.Notes != "" || kb.Origin() != path || !strings.Contains(strings.Join(kb.Args, " "), "sink") {
		t.Errorf("override not applied whole: %+v", kb)
	}
	if last := specs[len(specs)-1]; last.Name != "my-memory" || last.Origin() != path {
		t.Errorf("new entry not appended: %s (%s)", last.Name, last.Origin())
	}
	// The built-in catalog is untouched.
	if b, _ := Lookup("khatru-badger"); b.Version == "override" || b.Origin() != "" {
		t.Errorf("built-in entry changed: %+v", b)
	}
	// A later file wins over an earlier one.
	path2 := writeFile(t, dir, "later.toml", "[[relay]]\nname='my-memory'\nversion='2.0'\nkind='self'\nargs=['{{.Bin}}']\n", 0o644)
	specs, err = LoadCatalog(path, path2)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := specs.Lookup("my-memory"); m.Version != "2.0" || m.Origin() != path2 {
		t.Errorf("later file did not win: %+v", m)
	}
}

func TestCatalogFileErrorsNameFileAndKey(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ text, want string }{
		"unknown key":  {"[[relay]]\nname='a'\nversion='1'\nkind='self'\nargs=['x']\ncolour='red'\n", "line 6: unknown key relay.colour"},
		"unknown top":  {"title='x'\n", "line 1: unknown key title"},
		"syntax":       {"[[relay]]\nname='a\n", "line 2"},
		"bad kind":     {"[[relay]]\nname='a'\nversion='1'\nkind='apt'\nargs=['x']\n", `relay "a": unknown kind "apt"`},
		"command":      {"[[relay]]\nname='a'\nversion='1'\nkind='command'\nargs=['x']\n", "kind command is only for"},
		"bad name":     {"[[relay]]\nname='a,b'\nversion='1'\nkind='self'\nargs=['x']\n", "relay name"},
		"metrics path": {"[[relay]]\nname='a'\nversion='1'\nkind='self'\nargs=['x']\nmetrics_path='metrics'\n", `metrics_path "metrics": want a path`},
		"duplicate":    {"[[relay]]\nname='a'\nversion='1'\nkind='self'\nargs=['x']\n[[relay]]\nname='a'\nversion='1'\nkind='self'\nargs=['x']\n", "listed twice"},
	} {
		p := writeFile(t, dir, strings.ReplaceAll(name, " ", "-")+".toml", c.text, 0o644)
		_, err := LoadCatalog(p)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "catalog "+p+": ") || !strings.Contains(msg, c.want) {
			t.Errorf("%s: error %q: want one line starting with the file and holding %q", name, msg, c.want)
		}
	}
	if _, err := LoadCatalog(filepath.Join(dir, "absent.toml")); err == nil || !strings.Contains(err.Error(), "absent.toml: no such file") {
		t.Errorf("absent file: %v", err)
	}
}

func TestMergeLeavesItsArgumentsAlone(t *testing.T) {
	base := []Spec{{Name: "a", Version: "1"}, {Name: "b", Version: "1"}}
	over := []Spec{{Name: "b", Version: "2"}, {Name: "c", Version: "2"}, {Name: "a", Version: "3"}}
	got := Merge(base, over)
	var have []string
	for _, s := range got {
		have = append(have, s.Name+"@"+s.Version)
	}
	if strings.Join(have, " ") != "a@3 b@2 c@2" {
		t.Errorf("merged %v", have)
	}
	if base[0].Version != "1" || base[1].Version != "1" || len(base) != 2 {
		t.Errorf("base modified: %+v", base)
	}
}

func TestValidName(t *testing.T) {
	for _, n := range []string{"strfry", "nostr-rs-relay-sqlite", "a.b_c", "X9"} {
		if err := ValidName(n); err != nil {
			t.Errorf("%q refused: %v", n, err)
		}
	}
	for _, n := range []string{"", "-a", ".a", "a b", "a/b", "a,b", "a=b", "a:b", "é"} {
		if ValidName(n) == nil {
			t.Errorf("%q accepted", n)
		}
	}
}

// binDirSpecs returns a bin dir holding an executable strfry, an executable
// nostr-rs-relay-sqlite and a non-executable orly.
func binDir(t *testing.T) string {
	dir := t.TempDir()
	writeFile(t, dir, "strfry", "#!/bin/sh\nexit 0\n", 0o755)
	writeFile(t, dir, "nostr-rs-relay-sqlite", "#!/bin/sh\nexit 0\n", 0o755)
	writeFile(t, dir, "orly", "not a program\n", 0o644)
	writeFile(t, dir, "khatru-badger", "#!/bin/sh\nexit 0\n", 0o755)
	return dir
}

func TestBinDirResolution(t *testing.T) {
	t.Setenv("RELAYBENCH_BIN_DIR", "")
	t.Setenv("RELAYBENCH_STRFRY_BIN", "")
	dir := binDir(t)
	cache := t.TempDir()
	spec := func(name string) Spec {
		s, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	o := Options{BinDir: dir, CacheDir: cache, SelfBin: "/self/relaybench"}

	p, from, err := Binary(spec("strfry"), o)
	if err != nil || p != filepath.Join(dir, "strfry") || from != "--bin-dir "+dir {
		t.Errorf("strfry: %q from %q, %v", p, from, err)
	}
	// A cargo relay with a prebuilt binary needs no build.
	p, from, err = Binary(spec("nostr-rs-relay-sqlite"), o)
	if err != nil || p != filepath.Join(dir, "nostr-rs-relay-sqlite") {
		t.Errorf("nostr-rs-relay-sqlite: %q from %q, %v", p, from, err)
	}
	if ok, bin, _, why := Status(spec("nostr-rs-relay-sqlite"), o); !ok || bin != p {
		t.Errorf("nostr-rs-relay-sqlite status: %v %q %q", ok, bin, why)
	}
	t.Setenv("PATH", t.TempDir()) // no cargo: Install must not try to build
	got, err := InstallSpec(context.Background(), spec("nostr-rs-relay-sqlite"), o)
	if err != nil || got != p {
		t.Errorf("InstallSpec with a prebuilt binary: %q, %v", got, err)
	}
	// A file that is not executable is an error, not ignored.
	if _, _, err := Binary(spec("orly"), o); !IsSkip(err) || !strings.Contains(err.Error(), "not an executable file") {
		t.Errorf("orly (not executable): %v", err)
	}
	// Self relays ignore the bin dir.
	if p, from, _ := Binary(spec("khatru-badger"), o); p != "/self/relaybench" || from != "relaybench itself" {
		t.Errorf("khatru-badger: %q from %q", p, from)
	}
	// --bin wins over the bin dir.
	other := writeFile(t, t.TempDir(), "strfry-mine", "#!/bin/sh\n", 0o755)
	o2 := o
	o2.Bins = map[string]string{"strfry": other}
	if p, from, err := Binary(spec("strfry"), o2); err != nil || p != other || from != "--bin" {
		t.Errorf("--bin: %q from %q, %v", p, from, err)
	}
	// The bin dir wins over the spec's env var.
	t.Setenv("RELAYBENCH_STRFRY_BIN", other)
	if p, _, _ := Binary(spec("strfry"), o); p != filepath.Join(dir, "strfry") {
		t.Errorf("bin dir lost to the env var: %q", p)
	}
	// A relay the bin dir lacks falls back as before.
	if _, from, err := Binary(spec("strfry"), Options{CacheDir: cache}); err != nil || from != "$RELAYBENCH_STRFRY_BIN" {
		t.Errorf("env var: from %q, %v", from, err)
	}
	if _, _, err := Binary(spec("wisp"), o); !IsSkip(err) {
		t.Errorf("wisp (not in the bin dir): %v", err)
	}
	// RELAYBENCH_BIN_DIR when no BinDir is given.
	t.Setenv("RELAYBENCH_BIN_DIR", dir)
	if p, from, err := Binary(spec("strfry"), Options{CacheDir: cache}); err != nil || p != filepath.Join(dir, "strfry") || from != "RELAYBENCH_BIN_DIR="+dir {
		t.Errorf("RELAYBENCH_BIN_DIR: %q from %q, %v", p, from, err)
	}
}
