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
	file := name
	if f, ok := sharedBinOf[name]; ok {
		file = f
	}
	bin := filepath.Join(dir, file)
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no %s binary in %s", file, dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	inst, err := harness.Start(ctx, name, harness.StartOptions{BinDir: dir, Bins: map[string]string{name: bin}, BaseDir: t.TempDir(), DataRoot: t.TempDir()})
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

// sharedBinOf names the binary of a catalog entry that runs another
// entry's binary with another configuration.
var sharedBinOf = map[string]string{"nostr-rs-relay-auth": "nostr-rs-relay-sqlite"}

// The findings on real relays, each pinned: the check ends as stated (a
// change of the relay's behaviour fails the test), and no check not
// listed fails. Each was checked against the relay's source (see the
// package's findings in the report of this change).
var sharedFindings = map[string]map[string]results.CheckStatus{
	// strfry keeps ephemeral events for events.ephemeralEventsLifetimeSeconds
	// (default 300) and answers ties newest-stored first.
	// Every HTTP answer carries Access-Control-Allow-Origin alone
	// (src/apps/relay/RelayWebsocket.cpp preGenerateHttpResponse).
	"strfry": {
		"req.limit-tie-lowest-id": results.CheckNamed,
		"ephemeral.not-stored":    results.CheckNamed,
		"nip11.cors":              results.CheckFail,
		"nip77.reconcile":         results.CheckPass,
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
		// NIP-11 with Access-Control-Allow-Origin alone, no CORS on OPTIONS
		// (src/server.rs); NIP-42 announced whatever nip42_auth says
		// (src/info.rs), no challenge; a kind-22242 EVENT is ephemeral and
		// broadcast (src/db.rs is_ephemeral branch).
		"nip11.cors":          results.CheckFail,
		"nip42.auth-accepted": results.CheckNamed,
		"nip42.not-broadcast": results.CheckFail,
	},
	// nostr-rs-relay-sqlite with nip42_auth on: a challenge at connect; a
	// valid AUTH is never answered (src/server.rs: the Ok(_) branch of
	// conn.authenticate only logs), so it is neither accepted nor refused.
	"nostr-rs-relay-auth": {
		"req.multi-filter-once":     results.CheckFail,
		"ephemeral.ok":              results.CheckFail,
		"req.limit-zero":            results.CheckNamed,
		"req.order-no-limit":        results.CheckNamed,
		"req.limit-tie-lowest-id":   results.CheckNamed,
		"replaceable.tie-lowest-id": results.CheckNamed,
		"addressable.tie-lowest-id": results.CheckNamed,
		"req.malformed-closed":      results.CheckNamed,
		"nip11.cors":                results.CheckFail,
		"nip42.auth-ok":             results.CheckFail,
		"nip42.auth-accepted":       results.CheckUnknown,
		"nip42.not-broadcast":       results.CheckFail,
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
		// CORS headers on NIP-11 only with ORLY_CORS_ENABLED (default
		// false, app/server.go); ephemeral kinds, 22242 included, delivered
		// (pkg/event/routing/ephemeral.go); COUNT answered with a bare
		// number (countenvelope Response.Marshal), the sum of each filter's
		// count (app/handle-count.go); a malformed COUNT gets NOTICE "COUNT
		// processing failed" (app/handle-message.go).
		"nip11.cors":           results.CheckFail,
		"nip42.not-broadcast":  results.CheckFail,
		"nip45.count-form":     results.CheckFail,
		"nip45.count-union":    results.CheckFail,
		"nip45.refused-closed": results.CheckFail,
		// search words are matched any of them, a key:value extension's
		// words too (pkg/database/tokenize.go TokenWords, query-for-ids.go)
		"nip50.extension-ignored": results.CheckNamed,
	},
	// Wisp v0.6.1: a live event goes to the first matching subscription of
	// a connection only (src/subscriptions.zig snapshotMatch:
	// conn.matchesEvent returns one sub_id).
	"wisp": {
		"req.two-subscriptions-live": results.CheckNamed,
		"req.limit-zero":             results.CheckNamed,
		"req.limit-tie-lowest-id":    results.CheckNamed,
		"req.malformed-closed":       results.CheckNamed,
		// A REQ of several filters gets the first filter's limit in all
		// (src/handler.zig handleReq: limit = filters[0].limit()).
		"req.multi-filter-own-limit": results.CheckFail,
		// A challenge only when auth is needed (src/handler.zig); COUNT sums
		// each filter's count (handleCount), a malformed COUNT is counted.
		"nip42.auth-accepted":         results.CheckNamed,
		"nip45.count-union":           results.CheckFail,
		"nip45.refused-closed":        results.CheckNamed,
		"nip50.search-and-conditions": results.CheckPass,
		"nip77.reconcile":             results.CheckPass,
	},
}

func TestSharedRelays(t *testing.T) {
	for _, name := range []string{"strfry", "nostr-rs-relay-sqlite", "nostr-rs-relay-auth", "orly", "wisp"} {
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
