package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nbd-wtf/go-nostr"
)

func TestPostgresClusterStartStop(t *testing.T) {
	if _, err := PostgresBinDir(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	parent := t.TempDir()
	traversable(parent)
	logFile := filepath.Join(t.TempDir(), "pg.log")
	pg, err := StartPostgres(ctx, parent, logFile, "")
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(context.Background())
	if !strings.HasPrefix(pg.URL, "postgres://postgres@127.0.0.1:") || pg.PID <= 0 {
		t.Fatalf("URL %q PID %d", pg.URL, pg.PID)
	}
	if err := pg.psql(ctx, pgDatabase, "CREATE TABLE t (v text); INSERT INTO t SELECT repeat('x', 1000) FROM generate_series(1, 2000)"); err != nil {
		t.Fatal(err)
	}
	before, err := pg.DatabaseSize(ctx)
	if err != nil || before < 2_000_000 {
		t.Fatalf("database size %d, %v: want the 2 MB just written", before, err)
	}
	if err := pg.ResetDatabase(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pg.psql(ctx, pgDatabase, "SELECT * FROM t"); err == nil {
		t.Error("table survived ResetDatabase")
	}
	after, _ := pg.DatabaseSize(ctx)
	if after >= before {
		t.Errorf("size after reset %d, before %d", after, before)
	}
	tree := treeOf(allStats(), []int{pg.PID}, nil)
	if len(tree) < 3 {
		t.Errorf("postmaster %d has %d processes in its tree: want the postmaster and its workers", pg.PID, len(tree))
	}
	dir, sock, pid := pg.Dir, pg.Sock, pg.PID
	if err := pg.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket dir %s survives: %v", sock, err)
	}
	assertGone(t, pid)
	for _, st := range tree {
		if now, ok := readStat(st.pid); ok && now.state != 'Z' {
			t.Errorf("postgres process %d survives Close", st.pid)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("cluster dir %s survives: %v", dir, err)
	}
	if err := pg.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestRelayerIntegration builds relayer (pinned, into a temporary cache),
// starts it on a private PostgreSQL cluster, publishes an event and reads it
// back. It takes about a minute: run it with
//
//	RELAYBENCH_INTEGRATION=1 go test ./harness/ -run Integration -v
func TestRelayerIntegration(t *testing.T) {
	if os.Getenv("RELAYBENCH_INTEGRATION") != "1" || testing.Short() {
		t.Skip("integration test: set RELAYBENCH_INTEGRATION=1")
	}
	if _, err := PostgresBinDir(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	cache := os.Getenv("RELAYBENCH_TEST_CACHE") // reuse a build between runs if set
	if cache == "" {
		cache = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var progress strings.Builder
	bin, err := Install(ctx, "relayer-postgres", Options{CacheDir: cache, Log: &progress})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built %s\n%s", bin, progress.String())
	spec, _ := Lookup("relayer-postgres")
	if ok, path, _, why := Status(spec, Options{CacheDir: cache}); !ok || path != bin {
		t.Fatalf("after install: installed=%v path=%q why=%q", ok, path, why)
	}
	// A second install reuses the build.
	start := time.Now()
	if again, err := Install(ctx, "relayer-postgres", Options{CacheDir: cache}); err != nil || again != bin || time.Since(start) > 5*time.Second {
		t.Errorf("second install: %q, %v after %v", again, err, time.Since(start))
	}

	dataRoot := t.TempDir()
	traversable(dataRoot)
	inst, err := Start(ctx, "relayer-postgres", StartOptions{CacheDir: cache, BaseDir: t.TempDir(), DataRoot: dataRoot})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop(context.Background())
	end := inst.Begin()
	c := dial(t, inst.URL)
	// Enough work that the relay's CPU time, counted in 10 ms clock ticks,
	// cannot round to zero (relayer + PostgreSQL spend ~4 ms per event).
	var ev nostr.Event
	for i := range 300 {
		ev = newEvent(t, fmt.Sprintf("relayer integration %d", i))
		if ok, reason := c.publish(ev); !ok {
			t.Fatalf("publish: OK false %q", reason)
		}
	}
	if ids := c.query(nostr.Filter{IDs: []string{ev.ID}}); len(ids) != 1 || ids[0] != ev.ID {
		t.Fatalf("query by id returned %v", ids)
	}
	res := end()
	if res.RelayCPUSecs <= 0 || res.RelayPeakRSS <= 0 || res.RelayDataBytes <= 0 {
		t.Errorf("resources %+v: want CPU, RSS and database size", res)
	}
	t.Logf("relayer+postgres: cpu %.3fs peak rss %d MB db %d kB", res.RelayCPUSecs, res.RelayPeakRSS>>20, res.RelayDataBytes>>10)

	if err := inst.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	c2 := dial(t, inst.URL)
	if ids := c2.query(nostr.Filter{IDs: []string{ev.ID}}); len(ids) != 0 {
		t.Errorf("after reset relayer still has %v", ids)
	}
	pgPID, pgDir, pid := inst.Postgres.PID, inst.Postgres.Dir, inst.PID
	if err := inst.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertGone(t, pid)
	assertGone(t, pgPID)
	if _, err := os.Stat(pgDir); !os.IsNotExist(err) {
		t.Errorf("cluster dir survives: %v", err)
	}
}

// traversable lets the postgres user enter a t.TempDir (made 0700).
func traversable(dir string) {
	os.Chmod(dir, 0o755)
	os.Chmod(filepath.Dir(dir), 0o755)
}

// TestInstalledRelaysIntegration starts every cargo or user-supplied relay
// that is installed here (nostr-rs-relay after "relaybench relays install
// nostr-rs-relay-sqlite"; strfry, orly, wisp through RELAYBENCH_*_BIN),
// publishes an event, reads it back and stops it. It never builds anything.
func TestInstalledRelaysIntegration(t *testing.T) {
	if os.Getenv("RELAYBENCH_INTEGRATION") != "1" || testing.Short() {
		t.Skip("integration test: set RELAYBENCH_INTEGRATION=1")
	}
	specs, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range specs {
		if spec.Kind != KindCargo && spec.Kind != KindBinary || spec.BinOf != "" {
			continue // a variant (orly-auth, …) runs a binary tested under its own name
		}
		t.Run(spec.Name, func(t *testing.T) {
			if ok, _, _, why := Status(spec, Options{}); !ok {
				t.Skipf("skipping: %s", why)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			dataRoot := t.TempDir()
			inst, err := Start(ctx, spec.Name, StartOptions{BaseDir: t.TempDir(), DataRoot: dataRoot})
			if err != nil {
				t.Fatal(err)
			}
			defer inst.Stop(context.Background())
			end := inst.Begin()
			c := dial(t, inst.URL)
			ev := newEvent(t, "installed relay "+spec.Name)
			if ok, reason := c.publish(ev); !ok {
				t.Fatalf("publish: OK false %q", reason)
			}
			if ids := c.query(nostr.Filter{IDs: []string{ev.ID}}); len(ids) != 1 || ids[0] != ev.ID {
				t.Fatalf("query by id returned %v", ids)
			}
			res := end()
			t.Logf("%s: cpu %.3fs peak rss %d MB data %d kB", spec.Name, res.RelayCPUSecs, res.RelayPeakRSS>>20, res.RelayDataBytes>>10)
			pid := inst.PID
			if err := inst.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			assertGone(t, pid)
		})
	}
}
