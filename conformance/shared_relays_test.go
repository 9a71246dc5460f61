package conformance

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/results"
)

// sharedBinDir is the folder of real relay binaries ($RELAYBENCH_BIN_DIR,
// else ../../shared/relays/bin from this package).
func sharedBinDir() string {
	if d := os.Getenv("RELAYBENCH_BIN_DIR"); d != "" {
		return d
	}
	d, _ := filepath.Abs(filepath.Join("..", "..", "shared", "relays", "bin"))
	return d
}

// startShared starts the real relay name from sharedBinDir, stopped when
// the test ends; it skips in one line when the binary is absent.
func startShared(t *testing.T, name string) (string, *nip11.Info) {
	t.Helper()
	integration(t)
	dir := sharedBinDir()
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		t.Skipf("no %s binary in %s", name, dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	inst, err := harness.Start(ctx, name, harness.StartOptions{BinDir: dir, BaseDir: t.TempDir(), DataRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		inst.Stop(ctx)
	})
	info, _, err := nip11.Fetch(ctx, inst.URL)
	if err != nil {
		t.Logf("%s: no NIP-11 document: %v", name, err)
	}
	return inst.URL, info
}

// The findings on real relays, each pinned: the check ends as stated (a
// change of the relay's behaviour fails the test), and no check not
// listed fails.
var sharedFindings = map[string]map[string]results.CheckStatus{
	"strfry":                {},
	"nostr-rs-relay-sqlite": {},
	"orly":                  {},
	"wisp":                  {},
}

func TestSharedRelays(t *testing.T) {
	for _, name := range []string{"strfry", "nostr-rs-relay-sqlite", "orly", "wisp"} {
		t.Run(name, func(t *testing.T) {
			url, info := startShared(t, name)
			got := runAll(t, url, info)
			want := sharedFindings[name]
			for id, c := range got {
				w, pinned := want[id]
				switch {
				case pinned && c.Status != w:
					t.Errorf("%s: %s, pinned %s", id, describe(c), w)
				case !pinned && c.Status == results.CheckFail:
					t.Errorf("%s: %s", id, describe(c))
				}
			}
		})
	}
}
