package conformance

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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
// listed fails. Each was checked against the relay's source (see the
// package's findings in the report of this change).
var sharedFindings = map[string]map[string]results.CheckStatus{
	// strfry keeps ephemeral events for events.ephemeralEventsLifetimeSeconds
	// (default 300) and answers ties newest-stored first.
	"strfry": {
		"req.limit-tie-lowest-id": results.CheckNamed,
		"ephemeral.not-stored":    results.CheckNamed,
	},
	// nostr-rs-relay 0.8.12: one SQL query per filter, not deduplicated
	// (src/repo/sqlite.rs query_subscription); no OK for ephemeral events
	// (fixed in a7b169c, after 0.8.12); no limit: ORDER BY created_at ASC.
	"nostr-rs-relay-sqlite": {
		"req.multi-filter-once":     results.CheckFail,
		"ephemeral.ok":              results.CheckFail,
		"req.limit-zero":            results.CheckNamed,
		"req.order-no-limit":        results.CheckNamed,
		"req.limit-tie-lowest-id":   results.CheckNamed,
		"replaceable.tie-lowest-id": results.CheckNamed,
		"addressable.tie-lowest-id": results.CheckNamed,
		"req.malformed-closed":      results.CheckNamed,
	},
	// ORLY v0.66.0: ids override every other condition
	// (pkg/database/query-events.go); a filter whose limit its answer filled
	// (limit 0 included) gets no live subscription (app/handle-req.go); a
	// REQ that does not parse gets NOTICE "REQ processing failed"
	// (app/handle-message.go); superseded versions are kept and returned;
	// a duplicate is "blocked:" false.
	"orly": {
		"req.ids-and-conditions":    results.CheckFail,
		"req.limit-zero":            results.CheckFail,
		"req.limit-filled-live":     results.CheckFail,
		"req.malformed-closed":      results.CheckFail,
		"req.limit-tie-lowest-id":   results.CheckNamed,
		"replaceable.latest-stored": results.CheckNamed,
		"replaceable.tie-lowest-id": results.CheckNamed,
		"addressable.tie-lowest-id": results.CheckNamed,
		"event.duplicate-ok-true":   results.CheckNamed,
	},
	// Wisp v0.6.1: a live event goes to the first matching subscription of
	// a connection only (src/subscriptions.zig snapshotMatch:
	// conn.matchesEvent returns one sub_id).
	"wisp": {
		"req.two-subscriptions-live": results.CheckNamed,
		"req.limit-zero":             results.CheckNamed,
		"req.limit-tie-lowest-id":    results.CheckNamed,
		"req.malformed-closed":       results.CheckNamed,
	},
}

func TestSharedRelays(t *testing.T) {
	for _, name := range []string{"strfry", "nostr-rs-relay-sqlite", "orly", "wisp"} {
		t.Run(name, func(t *testing.T) {
			url, info := startShared(t, name)
			got := runAll(t, url, info)
			want := sharedFindings[name]
			var line []string
			for _, c := range Checks() {
				if r, ok := got[c.ID]; ok {
					line = append(line, c.ID+"="+string(r.Status))
				}
			}
			t.Logf("%s: %s", name, strings.Join(line, " "))
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
