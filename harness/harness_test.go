package harness

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/nbd-wtf/go-nostr"
)

func TestCatalogParsesAndRenders(t *testing.T) {
	specs, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"embedded", "khatru-native", "khatru-badger", "khatru-lmdb", "khatru-sqlite3", "khatru-memory", "sink",
		"relayer-postgres", "nostr-rs-relay-sqlite", "strfry", "orly", "wisp"}
	have := map[string]Spec{}
	for _, s := range specs {
		have[s.Name] = s
	}
	for _, n := range want {
		if _, ok := have[n]; !ok {
			t.Errorf("catalog lacks %s", n)
		}
	}
	d := TemplateData{Bin: "/x/relay", Host: Host, Port: 4321, Addr: "127.0.0.1:4321", DataDir: "/run/d",
		RunDir: "/run", ConfigFile: "/run/c", DatabaseURL: "postgres://p@127.0.0.1:5/relaybench"}
	for _, s := range specs {
		r, err := s.Render(d)
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		if r.Args[0] != "/x/relay" {
			t.Errorf("%s: argv[0] = %q, want the binary", s.Name, r.Args[0])
		}
		all := strings.Join(r.Args, " ") + " " + strings.Join(r.Env, " ") + " " + r.Config
		if !strings.Contains(all, "4321") {
			t.Errorf("%s: port appears nowhere in args, env or config", s.Name)
		}
		if !strings.Contains(all, "/run/d") && s.Name != "sink" && !s.Postgres {
			t.Errorf("%s: data dir appears nowhere", s.Name)
		}
		if s.Kind == KindSelf && !strings.Contains(all, "--store") {
			t.Errorf("%s: self relay without --store", s.Name)
		}
	}
	if r, _ := have["relayer-postgres"].Render(d); !strings.Contains(strings.Join(r.Env, " "), "POSTGRESQL_DATABASE=postgres://p@127.0.0.1:5/relaybench") {
		t.Errorf("relayer env %q lacks the database URL", r.Env)
	}
	if r, _ := have["strfry"].Render(d); !strings.Contains(r.Config, "port = 4321") || !strings.Contains(r.Config, `db = "/run/d/"`) {
		t.Errorf("strfry config:\n%s", r.Config)
	}
	if r, _ := have["wisp"].Render(d); !strings.Contains(r.Config, "events_per_minute = 0") {
		t.Errorf("wisp config does not lift the rate limit:\n%s", r.Config)
	}
	if r, _ := have["orly"].Render(d); !strings.Contains(strings.Join(r.Env, " "), "ORLY_HTTP_GUARD_ENABLED=false") {
		t.Errorf("orly env keeps the HTTP guard: %q", r.Env)
	}
	if have["sink"].StopSig() != syscall.SIGTERM || have["sink"].GracePeriod() != 10*time.Second {
		t.Errorf("sink stop: %v after %v", have["sink"].StopSig(), have["sink"].GracePeriod())
	}
}

func TestCatalogRejectsBadEntries(t *testing.T) {
	for name, text := range map[string]string{
		"unknown key":   "[[relay]]\nname='a'\nversion='1'\nkind='self'\nargs=['x']\ncolour='red'\n",
		"bad kind":      "[[relay]]\nname='a'\nversion='1'\nkind='apt'\nargs=['x']\n",
		"bad template":  "[[relay]]\nname='a'\nversion='1'\nkind='self'\nargs=['{{.Nope}}']\n",
		"bad signal":    "[[relay]]\nname='a'\nversion='1'\nkind='self'\nargs=['x']\nstop_signal='SIGHUP'\n",
		"duplicate":     "[[relay]]\nname='a'\nversion='1'\nkind='self'\nargs=['x']\n[[relay]]\nname='a'\nversion='1'\nkind='self'\nargs=['x']\n",
		"binary no env": "[[relay]]\nname='a'\nversion='1'\nkind='binary'\nargs=['x']\n",
	} {
		if _, err := ParseCatalog([]byte(text)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	_, err := Lookup("nosuch")
	if err == nil || !strings.Contains(err.Error(), "khatru-memory") {
		t.Errorf("Lookup(nosuch) = %v, want an error listing known names", err)
	}
}

func TestBinaryRelayWithoutBinaryIsSkipped(t *testing.T) {
	t.Setenv("RELAYBENCH_STRFRY_BIN", "")
	t.Setenv("RELAYBENCH_BIN_DIR", "")
	_, err := Start(context.Background(), "strfry", StartOptions{BaseDir: t.TempDir()})
	if !IsSkip(err) {
		t.Fatalf("Start(strfry) = %v, want a skip", err)
	}
	// what is missing and how to get it; "skipped" is compare's word, not the relay's error
	if want := "strfry needs a binary you supply, and no package registry has it: build it from its source, https://github.com/hoytech/strfry (checked here at f8a56a8; C++ with LMDB), then pass --bin strfry=PATH, --bin-dir DIR or set RELAYBENCH_STRFRY_BIN"; err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
	spec, _ := Lookup("relayer-postgres")
	ok, _, _, why := Status(spec, Options{CacheDir: t.TempDir()})
	if ok || !strings.Contains(why, "relaybench relays install relayer-postgres") {
		t.Errorf("relayer in an empty cache: installed=%v why=%q", ok, why)
	}
}

// TestEmptyBinDirSaysWhereItLooked: with an existing but empty bin dir, the
// skip names the file it looked for there and how the dir was given, not
// only "pass --bin-dir DIR" (given already).
func TestEmptyBinDirSaysWhereItLooked(t *testing.T) {
	t.Setenv("RELAYBENCH_STRFRY_BIN", "")
	dir := t.TempDir()
	for _, name := range []string{"strfry", "relayer-postgres"} {
		spec, _ := Lookup(name)
		for _, o := range []Options{{BinDir: dir, CacheDir: t.TempDir()}, {CacheDir: t.TempDir()}} {
			from := "--bin-dir " + dir
			if o.BinDir == "" {
				t.Setenv("RELAYBENCH_BIN_DIR", dir)
				from = "RELAYBENCH_BIN_DIR=" + dir
			}
			_, _, _, why := Status(spec, o)
			if want := filepath.Join(dir, name) + " (from " + from + ")"; !strings.Contains(why, want) {
				t.Errorf("%s: %q, want it to name %q", name, why, want)
			}
		}
	}
}

func startTest(t *testing.T, name string, o StartOptions) *Instance {
	t.Helper()
	o.SelfBin = selfBin(t)
	if o.BaseDir == "" {
		o.BaseDir = t.TempDir()
	}
	if o.DataRoot == "" {
		o.DataRoot = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	inst, err := Start(ctx, name, o)
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() { inst.Stop(context.Background()) })
	return inst
}

// assertGone checks that nothing of process group pgid lives.
func assertGone(t *testing.T, pgid int) {
	t.Helper()
	if live := groupLive(pgid); len(live) > 0 {
		t.Errorf("process group %d still has live processes %v", pgid, live)
	}
}

func TestStartStopMemoryAndSink(t *testing.T) {
	for _, name := range []string{"khatru-memory", "sink"} {
		t.Run(name, func(t *testing.T) {
			inst := startTest(t, name, StartOptions{})
			if !strings.HasPrefix(inst.URL, "ws://127.0.0.1:") || inst.PID <= 0 {
				t.Fatalf("URL %q PID %d", inst.URL, inst.PID)
			}
			c := dial(t, inst.URL)
			ev := newEvent(t, "hello "+name)
			if ok, reason := c.publish(ev); !ok {
				t.Fatalf("publish: OK false %q", reason)
			}
			ids := c.query(nostr.Filter{IDs: []string{ev.ID}})
			if name == "sink" && len(ids) != 0 {
				t.Errorf("sink returned %v", ids)
			}
			if name == "khatru-memory" && (len(ids) != 1 || ids[0] != ev.ID) {
				t.Errorf("query by id returned %v", ids)
			}
			if _, err := os.Stat(inst.DataDir); err != nil {
				t.Errorf("data dir: %v", err)
			}
			found := false
			for _, i := range Live() {
				found = found || i == inst
			}
			if !found {
				t.Error("instance not in the live registry")
			}
			if err := inst.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			assertGone(t, inst.PID)
			if _, err := os.Stat(inst.RunDir); !os.IsNotExist(err) {
				t.Errorf("run dir %s survives Stop: %v", inst.RunDir, err)
			}
			if inst.ExitErr() != nil {
				t.Errorf("ExitErr after Stop = %v, want nil", inst.ExitErr())
			}
			if err := inst.Stop(context.Background()); err != nil {
				t.Errorf("second Stop: %v", err)
			}
			for _, i := range Live() {
				if i == inst {
					t.Error("stopped instance still registered")
				}
			}
			log, _ := os.ReadFile(inst.LogFile)
			if !strings.Contains(string(log), "listening ws://") {
				t.Errorf("log %s lacks the relay's output:\n%s", inst.LogFile, log)
			}
		})
	}
}

func TestBeginMeasuresCPUAndRSS(t *testing.T) {
	inst := startTest(t, "khatru-memory", StartOptions{})
	c := dial(t, inst.URL)
	end := inst.Begin()
	for n := 0; n < 300; n++ {
		if ok, reason := c.publish(newEvent(t, "load "+strconv.Itoa(n))); !ok {
			t.Fatalf("publish: %q", reason)
		}
	}
	time.Sleep(2 * SampleInterval)
	// What the store wrote (nothing, for memory) plus a file of our own.
	if err := os.WriteFile(filepath.Join(inst.DataDir, "blob"), make([]byte, 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	res := end()
	if res.RelayCPUSecs <= 0 {
		t.Errorf("relay CPU %v after 300 signed events, want > 0", res.RelayCPUSecs)
	}
	if res.RelayPeakRSS < 1<<20 {
		t.Errorf("peak RSS %d, want at least 1 MiB", res.RelayPeakRSS)
	}
	if len(res.Series) < 2 {
		t.Fatalf("%d samples", len(res.Series))
	}
	var busy float64
	for j, s := range res.Series {
		if j > 0 && s.T <= res.Series[j-1].T {
			t.Errorf("sample times not increasing: %v", res.Series)
		}
		if s.RelayRSS <= 0 || s.RelayCPU < 0 || s.ClientCPU < 0 {
			t.Errorf("sample %+v", s)
		}
		busy += s.RelayCPU
	}
	if busy <= 0 {
		t.Error("no sample shows relay CPU")
	}
	// The series integrates to the total.
	var integral, prev float64
	for _, smp := range res.Series {
		integral += smp.RelayCPU * (smp.T - prev)
		prev = smp.T
	}
	if d := integral - res.RelayCPUSecs; d > 0.05 || d < -0.05 {
		t.Errorf("series integrates to %.3f CPU s, total says %.3f", integral, res.RelayCPUSecs)
	}
	if res.RelayDataBytes < 64<<10 {
		t.Errorf("data bytes %d: a 64 KiB file in the data dir was not counted", res.RelayDataBytes)
	}
	if again := end(); again != res {
		t.Error("end() is not idempotent")
	}
}

func TestResetEmptiesTheStore(t *testing.T) {
	inst := startTest(t, "khatru-memory", StartOptions{})
	port, pid := inst.Port, inst.PID
	c := dial(t, inst.URL)
	ev := newEvent(t, "before reset")
	if ok, _ := c.publish(ev); !ok {
		t.Fatal("publish refused")
	}
	os.WriteFile(filepath.Join(inst.DataDir, "leftover"), []byte("x"), 0o644)
	if err := inst.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	if inst.Port != port || inst.PID == pid {
		t.Errorf("after reset: port %d (was %d), pid %d (was %d)", inst.Port, port, inst.PID, pid)
	}
	assertGone(t, pid)
	if _, err := os.Stat(filepath.Join(inst.DataDir, "leftover")); !os.IsNotExist(err) {
		t.Errorf("data dir not wiped: %v", err)
	}
	c2 := dial(t, inst.URL)
	if ids := c2.query(nostr.Filter{IDs: []string{ev.ID}}); len(ids) != 0 {
		t.Errorf("after reset the relay still has %v", ids)
	}
	select {
	case <-inst.Exited():
		t.Fatal("Exited closed for the new process")
	default:
	}
}

func TestStopKillsTheWholeGroup(t *testing.T) {
	spec := groupSpec(time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	inst, err := StartSpec(ctx, spec, StartOptions{SelfBin: selfBin(t), BaseDir: t.TempDir(), DataRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop(context.Background())
	if n := len(groupLive(inst.PID)); n < 2 {
		t.Fatalf("group %d has %d live processes, want the relay and its sleep", inst.PID, n)
	}
	start := time.Now()
	if err := inst.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertGone(t, inst.PID)
	if d := time.Since(start); d < time.Second/2 || d > 15*time.Second {
		t.Errorf("Stop took %v; the TERM-ignoring child should be killed after the 1s grace", d)
	}
}

func TestExitBeforeReadyShowsTheLog(t *testing.T) {
	spec := Spec{Name: "dies", Version: "test", Kind: KindSelf,
		Args: []string{"/bin/sh", "-c", "echo cannot-open-database-xyz >&2; exit 3"}}
	_, err := StartSpec(context.Background(), spec, StartOptions{SelfBin: "/bin/true", BaseDir: t.TempDir(), DataRoot: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "cannot-open-database-xyz") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("got %v, want the exit status and the log line", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error is not one line: %q", err)
	}
}

func TestCPUPinning(t *testing.T) {
	inst := startTest(t, "sink", StartOptions{CPUs: "0"})
	out, err := os.ReadFile("/proc/" + strconv.Itoa(inst.PID) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "Cpus_allowed_list:") {
			if v := strings.TrimSpace(strings.TrimPrefix(l, "Cpus_allowed_list:")); v != "0" {
				t.Errorf("relay allowed on CPUs %q, want 0", v)
			}
			return
		}
	}
	t.Error("no Cpus_allowed_list")
}

func TestParseCPUs(t *testing.T) {
	set, err := ParseCPUs("0")
	if err != nil || set.Count() != 1 || !set.IsSet(0) {
		t.Errorf("ParseCPUs(0) = %v, %v", set, err)
	}
	for _, bad := range []string{"", "x", "1-0", "-1", "4000"} {
		if _, err := ParseCPUs(bad); err == nil {
			t.Errorf("ParseCPUs(%q) accepted", bad)
		}
	}
}

// helper starts the test binary as a parent holding a relay.
func helper(t *testing.T, spec string) (*group, int, string) {
	t.Helper()
	self, _ := os.Executable()
	cmd := exec.Command(self, "harness-helper", selfBin(t), spec)
	cmd.Env = append(os.Environ(), "HELPER_LOGS="+t.TempDir())
	g, r, line := startLeader(t, cmd)
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "ready" {
		t.Fatalf("helper said %q", line)
	}
	pgid, _ := strconv.Atoi(f[1])
	go func() { r.WriteTo(os.Stderr) }()
	return g, pgid, f[2]
}

// group is a test's child process leading a process group of its own.
type group struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once cmd is reaped (err set)
	err  error         // cmd.Wait's
}

// startGroup starts cmd as the leader of a process group of its own and
// reaps it as soon as it ends. When the test ends the whole group is
// killed, and cmd must be reaped within 10 s.
func startGroup(t *testing.T, cmd *exec.Cmd) *group {
	t.Helper()
	cmd.SysProcAttr = groupAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := &group{cmd: cmd, done: make(chan struct{})}
	go func() { g.err = cmd.Wait(); close(g.done) }()
	t.Cleanup(func() {
		killGroup(cmd.Process.Pid)
		select {
		case <-g.done:
		case <-time.After(10 * time.Second):
			t.Error("test process group did not exit within 10 s of SIGKILL")
		}
	})
	return g
}

// wait waits up to d for g's leader to end and returns cmd.Wait's error;
// what names it in the failure of a leader still running.
func (g *group) wait(t *testing.T, d time.Duration, what string) error {
	t.Helper()
	select {
	case <-g.done:
		return g.err
	case <-time.After(d):
		t.Fatalf("%s still running after %v", what, d)
		return nil
	}
}

// startLeader starts cmd as the leader of its own process group
// (startGroup) and returns it, its stdout and the first line it writes
// there.
func startLeader(t *testing.T, cmd *exec.Cmd) (*group, *bufio.Reader, string) {
	t.Helper()
	out, _ := cmd.StdoutPipe()
	g := startGroup(t, cmd)
	r := bufio.NewReader(out)
	return g, r, readLine(t, r, 60*time.Second)
}

// waitExit waits up to d for the helper g to end, killed or not.
func waitExit(t *testing.T, g *group, d time.Duration) {
	t.Helper()
	if err := g.wait(t, d, "helper"); err != nil && !strings.Contains(err.Error(), "killed") {
		t.Errorf("helper: %v", err)
	}
}

func TestSIGINTToParentLeavesNothing(t *testing.T) {
	g, pgid, runDir := helper(t, "group")
	if len(groupLive(pgid)) < 2 {
		t.Fatalf("relay group %d not running", pgid)
	}
	g.cmd.Process.Signal(syscall.SIGINT)
	waitExit(t, g, 30*time.Second)
	assertGone(t, pgid)
	if _, err := os.Stat(runDir); !os.IsNotExist(err) {
		t.Errorf("run dir %s survives: %v", runDir, err)
	}
}

func TestKilledParentTakesTheRelayAlong(t *testing.T) {
	g, pgid, runDir := helper(t, "khatru-memory")
	g.cmd.Process.Kill()
	waitExit(t, g, 30*time.Second)
	// Pdeathsig kills the relay when its parent dies without cleaning up.
	assertOrphanCleaned(t, pgid, runDir)
}

// assertOrphanCleaned: after its parent was killed, relay group pgid goes
// (waited for with a hang guard only), its run dir stays, and the next
// start (here: its sweep) removes the dead owner's run dir.
func assertOrphanCleaned(t *testing.T, pgid int, runDir string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); len(groupLive(pgid)) > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	assertGone(t, pgid)
	if _, err := os.Stat(runDir); err != nil {
		t.Fatalf("run dir of a killed parent: %v", err)
	}
	sweepStale(filepath.Dir(runDir), runPrefix)
	if _, err := os.Stat(runDir); !os.IsNotExist(err) {
		t.Errorf("sweep left %s: %v", runDir, err)
	}
}

func TestRelaysStartCommandSIGINT(t *testing.T) {
	bin := selfBin(t)
	if self, _ := os.Executable(); bin == self {
		t.Skip("skipping: the relaybench binary does not build yet (see the message above)")
	}
	cmd := exec.Command(bin, "relays", "start", "sink", "--out", t.TempDir())
	cmd.Env = append(os.Environ(), "RELAYBENCH_DATA="+t.TempDir())
	g, r, line := startLeader(t, cmd)
	_, pidText, ok := strings.Cut(line, "(pid ")
	pid, _ := strconv.Atoi(strings.TrimSuffix(pidText, ")"))
	if !ok || pid <= 0 || !strings.Contains(line, "ws://127.0.0.1:") {
		t.Fatalf("relays start said %q", line)
	}
	if len(groupLive(pid)) == 0 {
		t.Fatalf("relay %d not running", pid)
	}
	go r.WriteTo(os.Stderr)
	cmd.Process.Signal(syscall.SIGINT)
	g.wait(t, 30*time.Second, "relays start, SIGINT sent,")
	assertGone(t, pid)
}

func TestInstallNamesMissingTools(t *testing.T) {
	spec := Spec{Name: "needs-test", Version: "1.0", Kind: KindCargo, Crate: "x", BinName: "x",
		Needs: []string{"no-such-program-relaybench"}, Args: []string{"{{.Bin}}"}}
	_, err := InstallSpec(context.Background(), spec, Options{CacheDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "no-such-program-relaybench") || !strings.Contains(err.Error(), "apt-get install") {
		t.Errorf("got %v, want the missing program named with an install hint", err)
	}
	spec = Spec{Name: "nosrc-test", Version: "1.0", Kind: KindGoBuild, Source: "nosuch", BinName: "x", Args: []string{"{{.Bin}}"}}
	if _, err := InstallSpec(context.Background(), spec, Options{CacheDir: t.TempDir()}); err == nil {
		t.Error("go-build without sources succeeded")
	}
}

func TestParseStat(t *testing.T) {
	line := []byte("1234 (a (weird) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 4 0 999 123456789 300 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0")
	st, ok := parseStat(1234, line)
	if !ok || st.ppid != 1 || st.pgrp != 1234 || st.state != 'S' || st.cpuTicks != 310 || st.rssPages != 300 {
		t.Errorf("parseStat = %+v, %v", st, ok)
	}
}

func TestSelfStoresStart(t *testing.T) {
	if self, _ := os.Executable(); selfBin(t) == self {
		t.Skip("skipping: needs the relaybench binary (see the message above)")
	}
	for _, name := range []string{"embedded", "khatru-native", "khatru-badger", "khatru-lmdb", "khatru-sqlite3"} {
		t.Run(name, func(t *testing.T) {
			if !testCgoStores && (name == "khatru-lmdb" || name == "khatru-sqlite3") {
				t.Skip("skipping: needs the lmdb and sqlite3 stores (go test -tags cgostores)")
			}
			inst := startTest(t, name, StartOptions{})
			end := inst.Begin()
			c := dial(t, inst.URL)
			ev := newEvent(t, "store "+name)
			if ok, reason := c.publish(ev); !ok {
				t.Fatalf("publish: %q", reason)
			}
			if ids := c.query(nostr.Filter{IDs: []string{ev.ID}}); len(ids) != 1 {
				t.Fatalf("query by id returned %v", ids)
			}
			if res := end(); res.RelayDataBytes <= 0 {
				t.Errorf("data dir of a %s relay holding an event measured %d bytes", name, res.RelayDataBytes)
			}
		})
	}
}

func TestPortInUseIsReported(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = Start(context.Background(), "sink", StartOptions{SelfBin: selfBin(t), Port: port, BaseDir: t.TempDir(), DataRoot: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("start on a busy port: %v", err)
	}
}

// TestPortTakenByAnotherRelayIsNotReady: the port is held by another
// process that answers WebSocket upgrades (another relay given the same
// port between freePort and this one's bind): its answer must not pass for
// this relay's readiness, or every figure after it is the other relay's.
func TestPortTakenByAnotherRelayIsNotReady(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err == nil {
			c.Close(websocket.StatusNormalClosure, "")
		}
	}))
	defer other.Close()
	port := other.Listener.Addr().(*net.TCPAddr).Port
	inst, err := Start(context.Background(), "sink", StartOptions{SelfBin: selfBin(t), Port: port, BaseDir: t.TempDir(), DataRoot: t.TempDir()})
	if err == nil {
		inst.Stop(context.Background())
		t.Fatal("started on a port another process answers: the other process passed for the relay")
	}
	if !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("start on a port another relay holds: %v", err)
	}
}
