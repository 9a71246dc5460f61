package harness

import (
	"path/filepath"
	"strings"
	"testing"
)

// A variant (bin_of) runs the binary of another entry: found under its own
// name first, then under that entry's (--bin, --bin-dir, build cache).
func TestBinOfVariants(t *testing.T) {
	t.Setenv("RELAYBENCH_BIN_DIR", "")
	t.Setenv("RELAYBENCH_ORLY_BIN", "")
	spec := func(name string) Spec {
		s, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := spec("orly-auth"); s.BinOf != "orly" || !strings.Contains(strings.Join(s.Env, " "), "ORLY_AUTH_REQUIRED=true") {
		t.Fatalf("orly-auth: bin_of %q env %q", s.BinOf, s.Env)
	}
	if s := spec("nostr-rs-relay-auth"); s.BinOf != "nostr-rs-relay-sqlite" || !strings.Contains(s.Config, "nip42_auth = true") {
		t.Fatalf("nostr-rs-relay-auth: bin_of %q", s.BinOf)
	}
	dir := t.TempDir()
	orly := writeFile(t, dir, "orly", "#!/bin/sh\nexit 0\n", 0o755)
	nrs := writeFile(t, dir, "nostr-rs-relay-sqlite", "#!/bin/sh\nexit 0\n", 0o755)
	o := Options{BinDir: dir, CacheDir: t.TempDir()}
	if p, _, err := Binary(spec("orly-auth"), o); err != nil || p != orly {
		t.Errorf("orly-auth from the bin dir: %q, %v", p, err)
	}
	if p, _, err := Binary(spec("nostr-rs-relay-auth"), o); err != nil || p != nrs {
		t.Errorf("nostr-rs-relay-auth from the bin dir: %q, %v", p, err)
	}
	// Its own name wins.
	own := writeFile(t, dir, "orly-auth", "#!/bin/sh\nexit 0\n", 0o755)
	if p, _, _ := Binary(spec("orly-auth"), o); p != own {
		t.Errorf("own name lost: %q", p)
	}
	// --bin of the base entry serves the variant; its own --bin wins.
	other := writeFile(t, t.TempDir(), "orly-mine", "#!/bin/sh\n", 0o755)
	o2 := Options{CacheDir: t.TempDir(), Bins: map[string]string{"orly": other}}
	if p, _, err := Binary(spec("orly-auth"), o2); err != nil || p != other {
		t.Errorf("--bin orly: %q, %v", p, err)
	}
	o2.Bins["orly-auth"] = own
	if p, _, _ := Binary(spec("orly-auth"), o2); p != own {
		t.Errorf("--bin orly-auth lost: %q", p)
	}
	// The build cache is shared with the base entry.
	a, _ := InstallDir(spec("nostr-rs-relay-auth"), o)
	b, _ := InstallDir(spec("nostr-rs-relay-sqlite"), o)
	if a != b || filepath.Base(a) == "" {
		t.Errorf("install dirs %q and %q", a, b)
	}
}

// A variant without a binary is told in one name, its relay's: the one its
// environment variable is named after (not "--bin orly-auth=PATH … or set
// RELAYBENCH_ORLY_BIN").
func TestBinOfVariantWithoutBinary(t *testing.T) {
	t.Setenv("RELAYBENCH_BIN_DIR", "")
	t.Setenv("RELAYBENCH_ORLY_BIN", "")
	s, err := Lookup("orly-auth")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Binary(s, Options{CacheDir: t.TempDir()})
	if want := "orly-auth needs orly's binary, which you supply, and no package registry has ORLY: build it from its source, https://github.com/ZenTenApp/orly-relay (checked here at 8e5afff4; CGO_ENABLED=0 go build), then pass --bin orly=PATH, --bin-dir DIR or set RELAYBENCH_ORLY_BIN"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	dir := t.TempDir()
	_, _, err = Binary(s, Options{CacheDir: t.TempDir(), BinDir: dir})
	if want := "orly-auth needs orly's binary, which you supply, and no package registry has ORLY; " + filepath.Join(dir, "orly") + " (from --bin-dir " + dir + ") does not exist: build it from its source, https://github.com/ZenTenApp/orly-relay (checked here at 8e5afff4; CGO_ENABLED=0 go build), then put it there, pass --bin orly=PATH or set RELAYBENCH_ORLY_BIN"; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("with an empty bin dir: got %v\nwant …%s", err, want)
	}
	if err != nil && strings.Contains(err.Error(), "orly-auth=") {
		t.Errorf("names --bin orly-auth=: %v", err)
	}
	// A built variant is installed as its relay is, and told so.
	nrs, _ := Lookup("nostr-rs-relay-auth")
	ok, _, _, why := Status(nrs, Options{CacheDir: t.TempDir()})
	if want := "not installed (it runs nostr-rs-relay-sqlite's); run: relaybench relays install nostr-rs-relay-sqlite"; ok || why != want {
		t.Errorf("nostr-rs-relay-auth in an empty cache: installed %v, %q, want %q", ok, why, want)
	}
}
