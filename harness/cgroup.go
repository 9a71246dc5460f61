package harness

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/relaybench/relaybench/internal/numfmt"
)

// Limits are resource limits for a relay's process tree (--load-constraints).
// Zero fields are not limited.
type Limits struct {
	CPU    float64 // cores (CFS quota / period); 0.5 is half a core
	Memory int64   // bytes; the kernel OOM-kills the tree's largest process above it
}

// IsZero reports whether l limits nothing.
func (l Limits) IsZero() bool { return l.CPU == 0 && l.Memory == 0 }

// String formats l the way ParseLimits reads it: "cpu=0.5,mem=256M".
func (l Limits) String() string {
	var parts []string
	if l.CPU > 0 {
		parts = append(parts, "cpu="+strconv.FormatFloat(l.CPU, 'g', -1, 64))
	}
	if l.Memory > 0 {
		parts = append(parts, "mem="+cgFormatBytes(l.Memory))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

func cgFormatBytes(n int64) string {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// ParseLimits reads "cpu=0.5,mem=256M" (keys cpu/cpus and mem/memory, in any
// order, either may be left out) or the positional "0.5,256M" (CPU, then
// memory; "" or "-" skips one). Memory takes K, M, G, T suffixes (powers of
// 1024, optionally followed by "B" or "iB") or plain bytes. Errors name the
// flag -load-constraints.
func ParseLimits(s string) (Limits, error) {
	var l Limits
	s = strings.TrimSpace(s)
	if s == "" {
		return l, errors.New("--load-constraints: empty (want e.g. cpu=0.5,mem=256M)")
	}
	for n, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		k, v, keyed := strings.Cut(part, "=")
		if !keyed {
			v = part
			switch n {
			case 0:
				k = "cpu"
			case 1:
				k = "mem"
			default:
				return Limits{}, fmt.Errorf("--load-constraints: %q: more than two positional values (want CPU,MEM)", s)
			}
			if v == "" || v == "-" {
				continue
			}
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "cpu", "cpus":
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
				return Limits{}, fmt.Errorf("--load-constraints: cpu %q: want a positive number of cores (e.g. 0.5)", v)
			}
			if f < 0.01 {
				return Limits{}, fmt.Errorf("--load-constraints: cpu %q: below the 0.01-core minimum", v)
			}
			l.CPU = f
		case "mem", "memory":
			b, err := cgParseBytes(v)
			if err != nil {
				return Limits{}, fmt.Errorf("--load-constraints: mem %q: %v", v, err)
			}
			if b < 4<<20 {
				return Limits{}, fmt.Errorf("--load-constraints: mem %q: below the 4M minimum", v)
			}
			l.Memory = b
		default:
			return Limits{}, fmt.Errorf("--load-constraints: unknown key %q (want cpu=CORES,mem=BYTES)", k)
		}
	}
	if l.IsZero() {
		return l, fmt.Errorf("--load-constraints: %q limits nothing", s)
	}
	return l, nil
}

func cgParseBytes(v string) (int64, error) {
	v = strings.ToUpper(strings.TrimSpace(v))
	v = strings.TrimSuffix(strings.TrimSuffix(v, "B"), "I")
	mult := int64(1)
	if v != "" {
		switch v[len(v)-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			v = v[:len(v)-1]
		}
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f <= 0 || f*float64(mult) > math.MaxInt64/2 {
		return 0, errors.New("want a positive size such as 256M, 1G or 1048576")
	}
	return int64(f * float64(mult)), nil
}

// Cgroup is a control group holding a relay's process tree.
type Cgroup struct {
	Version int      // 1 or 2
	Dirs    []string // v2: one directory; v1: the cpu and/or memory directories
	Limits  Limits
	cpuDir  string // v1 cpu hierarchy dir or the v2 dir ("" when CPU is not limited)
	memDir  string // v1 memory hierarchy dir or the v2 dir ("" when memory is not limited)
}

// LimitReport is what a limited relay went through.
type LimitReport struct {
	Limits    Limits
	Mechanism string // "cgroup v1" or "cgroup v2"
	Dirs      []string
	// OOMKills counts processes the kernel killed for exceeding the memory
	// limit (memory.events oom_kill in v2, memory.oom_control oom_kill in v1).
	OOMKills int64
	// MemLimitHits counts times usage hit the limit (v1 memory.failcnt,
	// v2 memory.events max): reclaim under pressure, not necessarily a kill.
	MemLimitHits int64
	MemPeak      int64 // bytes (v1 memory.max_usage_in_bytes, v2 memory.peak when present)
	// CPUThrottled counts CFS periods in which the tree used its whole
	// quota and was stopped; CPUThrottledTime is how long it was stopped.
	CPUThrottled     int64
	CPUThrottledTime time.Duration
	// CPUCounted says cpu.stat gave nr_throttled (v1 and v2), so a zero
	// CPUThrottled is a count, not an unread counter.
	CPUCounted bool
	Exited     bool   // the relay process had exited when the report was made
	ExitErr    string // why, when it exited without being asked to
}

// Summary is one line for a reader: Usage, then Death when the relay died.
func (r LimitReport) Summary() string {
	if d := r.Death(); d != "" {
		return r.Usage() + "; relay died: " + d
	}
	return r.Usage()
}

// Usage is what the limits did to the relay, one line: the limits, CPU
// throttling, memory peak and limit hits (its death apart: Death).
func (r LimitReport) Usage() string {
	s := fmt.Sprintf("relay under %s (%s)", r.Limits, r.Mechanism)
	var parts []string
	if r.CPUThrottled > 0 {
		parts = append(parts, fmt.Sprintf("CPU-throttled in %d periods (%v stopped)", r.CPUThrottled, numfmt.Dur(r.CPUThrottledTime)))
	} else if r.CPUCounted && r.Limits.CPU > 0 {
		parts = append(parts, "0 CPU-throttled periods")
	}
	if r.MemPeak > 0 {
		parts = append(parts, "memory peak "+numfmt.Bytes(float64(r.MemPeak)))
	}
	if r.MemLimitHits > 0 {
		parts = append(parts, fmt.Sprintf("memory limit reached %d times", r.MemLimitHits))
	}
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, "; ")
	}
	return s
}

// Death says how the limited relay died, "" while it lives: OOM-killed
// under the limits (the kernel killed it for exceeding the memory limit),
// else exited, with the first line of why.
func (r LimitReport) Death() string {
	var s string
	switch {
	case r.OOMKills > 0:
		s = fmt.Sprintf("OOM-killed under %s (the kernel killed %d process(es) for exceeding the memory limit)", r.Limits, r.OOMKills)
	case r.ExitErr != "" || r.Exited:
		s = fmt.Sprintf("exited under %s", r.Limits)
	default:
		return ""
	}
	if r.ExitErr != "" {
		s += ": " + cgFirstLine(r.ExitErr)
	}
	return s
}

func cgFirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// cgroupRoot is where the hierarchies are mounted (a variable for tests).
var cgroupRoot = "/sys/fs/cgroup"

var (
	limitsMu sync.Mutex
	limited  = map[*Instance]*Cgroup{}
)

// Limit puts the relay's process tree (i.PID, its descendants and its
// process group) into a new cgroup with the limits l: cgroup v2 when the
// unified hierarchy offers the cpu/memory controllers needed, else writable
// cgroup v1 cpu/memory hierarchies, else an error saying neither is
// available. Children the relay forks later inherit the cgroup. cleanup
// moves nothing back: call it after the relay stopped; it waits (at most
// 5 s) for the cgroup to empty and removes it.
func (i *Instance) Limit(l Limits) (cleanup func(), err error) {
	i.mu.Lock()
	pid := i.PID
	running := i.cmd != nil
	i.mu.Unlock()
	if !running || pid <= 0 {
		return nil, fmt.Errorf("%s: not running: cannot limit its resources", i.Name)
	}
	cg, err := NewCgroup(fmt.Sprintf("relaybench-%s-%d", sanitize(i.Name), pid), l)
	if err != nil {
		return nil, err
	}
	if err := cg.AddTree(pid); err != nil {
		cg.Remove(0)
		return nil, fmt.Errorf("%s: %w", i.Name, err)
	}
	limitsMu.Lock()
	limited[i] = cg
	limitsMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			limitsMu.Lock()
			delete(limited, i)
			limitsMu.Unlock()
			if err := cg.Remove(5 * time.Second); err != nil {
				fmt.Fprintf(os.Stderr, "relaybench: %v\n", err)
			}
		})
	}, nil
}

// LimitReport reports what the relay went through under the limits set by
// Limit; false when it was not limited (or cleanup already ran).
func (i *Instance) LimitReport() (LimitReport, bool) {
	limitsMu.Lock()
	cg := limited[i]
	limitsMu.Unlock()
	if cg == nil {
		return LimitReport{}, false
	}
	r := cg.Report()
	select {
	case <-i.Exited():
		r.Exited = true
	default:
	}
	if err := i.ExitErr(); err != nil {
		r.ExitErr = err.Error()
	}
	return r, true
}

// NewCgroup creates the cgroup name with limits l (see Instance.Limit for
// the choice between v2 and v1).
func NewCgroup(name string, l Limits) (*Cgroup, error) {
	if l.IsZero() {
		return nil, errors.New("--load-constraints: no limit given")
	}
	var why []string
	cg, err := newV2(name, l)
	if err == nil {
		return cg, nil
	}
	why = append(why, "v2: "+err.Error())
	cg, err = newV1(name, l)
	if err == nil {
		return cg, nil
	}
	why = append(why, "v1: "+err.Error())
	return nil, fmt.Errorf("resource limits need cgroup v2 controllers or writable v1 cpu/memory hierarchies; neither is available: %s", strings.Join(why, "; "))
}

// needed lists the controllers l needs.
func (l Limits) needed() []string {
	var c []string
	if l.CPU > 0 {
		c = append(c, "cpu")
	}
	if l.Memory > 0 {
		c = append(c, "memory")
	}
	return c
}

const cfsPeriodUs = 100_000

func newV2(name string, l Limits) (*Cgroup, error) {
	var root string
	for _, r := range []string{cgroupRoot, filepath.Join(cgroupRoot, "unified")} {
		if _, err := os.Stat(filepath.Join(r, "cgroup.controllers")); err == nil {
			root = r
			break
		}
	}
	if root == "" {
		return nil, errors.New("no unified hierarchy (cgroup.controllers) under " + cgroupRoot)
	}
	b, err := os.ReadFile(filepath.Join(root, "cgroup.controllers"))
	if err != nil {
		return nil, err
	}
	have := strings.Fields(string(b))
	for _, c := range l.needed() {
		if !slices.Contains(have, c) {
			return nil, fmt.Errorf("%s/cgroup.controllers offers %q, not %s", root, strings.Join(have, " "), c)
		}
	}
	// Enable the controllers for the children of root (a no-op when they
	// already are).
	var plus []string
	for _, c := range l.needed() {
		plus = append(plus, "+"+c)
	}
	if err := os.WriteFile(filepath.Join(root, "cgroup.subtree_control"), []byte(strings.Join(plus, " ")), 0); err != nil {
		return nil, fmt.Errorf("enable %s in %s/cgroup.subtree_control: %w", strings.Join(plus, " "), root, err)
	}
	dir := filepath.Join(root, name)
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		return nil, err
	}
	cg := &Cgroup{Version: 2, Dirs: []string{dir}, Limits: l}
	if l.CPU > 0 {
		cg.cpuDir = dir
		quota := int64(math.Round(l.CPU * cfsPeriodUs))
		if err := os.WriteFile(filepath.Join(dir, "cpu.max"), []byte(fmt.Sprintf("%d %d", quota, cfsPeriodUs)), 0); err != nil {
			cg.Remove(0)
			return nil, fmt.Errorf("cpu.max: %w", err)
		}
	}
	if l.Memory > 0 {
		cg.memDir = dir
		if err := os.WriteFile(filepath.Join(dir, "memory.max"), []byte(strconv.FormatInt(l.Memory, 10)), 0); err != nil {
			cg.Remove(0)
			return nil, fmt.Errorf("memory.max: %w", err)
		}
		_ = os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0) // absent without swap accounting
	}
	return cg, nil
}

func newV1(name string, l Limits) (*Cgroup, error) {
	cg := &Cgroup{Version: 1, Limits: l}
	mk := func(ctrl string) (string, error) {
		h := filepath.Join(cgroupRoot, ctrl)
		if _, err := os.Stat(filepath.Join(h, "cgroup.procs")); err != nil {
			return "", fmt.Errorf("no %s hierarchy at %s", ctrl, h)
		}
		dir := filepath.Join(h, name)
		if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
			return "", fmt.Errorf("create %s: %w", dir, err)
		}
		cg.Dirs = append(cg.Dirs, dir)
		return dir, nil
	}
	if l.CPU > 0 {
		dir, err := mk("cpu")
		if err != nil {
			return nil, err
		}
		cg.cpuDir = dir
		quota := int64(math.Round(l.CPU * cfsPeriodUs))
		if err := cgWriteAll(dir, [][2]string{{"cpu.cfs_period_us", strconv.Itoa(cfsPeriodUs)}, {"cpu.cfs_quota_us", strconv.FormatInt(quota, 10)}}); err != nil {
			cg.Remove(0)
			return nil, err
		}
	}
	if l.Memory > 0 {
		dir, err := mk("memory")
		if err != nil {
			cg.Remove(0)
			return nil, err
		}
		cg.memDir = dir
		if err := cgWriteAll(dir, [][2]string{{"memory.limit_in_bytes", strconv.FormatInt(l.Memory, 10)}}); err != nil {
			cg.Remove(0)
			return nil, err
		}
		// Without swap the limit is the limit; with swap accounting, cap
		// memory+swap too so the relay cannot escape to swap.
		_ = os.WriteFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), []byte(strconv.FormatInt(l.Memory, 10)), 0)
	}
	return cg, nil
}

func cgWriteAll(dir string, kv [][2]string) error {
	for _, p := range kv {
		if err := os.WriteFile(filepath.Join(dir, p[0]), []byte(p[1]), 0); err != nil {
			return fmt.Errorf("write %s: %w", filepath.Join(dir, p[0]), err)
		}
	}
	return nil
}

// AddTree moves pid, its descendants and the members of process group pid
// into the cgroup (each of its directories). The process list is read
// twice, so that children forked while the first pass ran are caught.
func (cg *Cgroup) AddTree(pid int) error {
	moved := map[int]bool{}
	for pass := 0; pass < 2; pass++ {
		tree := treeOf(allStats(), []int{pid}, []int{pid})
		if pass == 0 && len(tree) == 0 {
			return fmt.Errorf("process %d not found", pid)
		}
		for _, st := range tree {
			if moved[st.pid] || st.state == 'Z' || st.state == 'X' {
				continue
			}
			for _, dir := range cg.Dirs {
				err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(st.pid)), 0)
				if err != nil {
					if _, alive := readStat(st.pid); !alive {
						break // exited meanwhile
					}
					return fmt.Errorf("move process %d into %s: %w", st.pid, dir, err)
				}
			}
			moved[st.pid] = true
		}
	}
	return nil
}

// Procs returns the pids in the cgroup (its first directory).
func (cg *Cgroup) Procs() []int {
	if len(cg.Dirs) == 0 {
		return nil
	}
	b, _ := os.ReadFile(filepath.Join(cg.Dirs[0], "cgroup.procs"))
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// Report reads the cgroup's OOM, memory and throttling counters.
func (cg *Cgroup) Report() LimitReport {
	r := LimitReport{Limits: cg.Limits, Mechanism: fmt.Sprintf("cgroup v%d", cg.Version), Dirs: cg.Dirs}
	if cg.memDir != "" {
		if cg.Version == 2 {
			kv := cgReadKV(filepath.Join(cg.memDir, "memory.events"))
			r.OOMKills = kv["oom_kill"]
			r.MemLimitHits = kv["max"]
			r.MemPeak = cgReadInt(filepath.Join(cg.memDir, "memory.peak"))
		} else {
			r.OOMKills = cgReadKV(filepath.Join(cg.memDir, "memory.oom_control"))["oom_kill"]
			r.MemLimitHits = cgReadInt(filepath.Join(cg.memDir, "memory.failcnt"))
			r.MemPeak = cgReadInt(filepath.Join(cg.memDir, "memory.max_usage_in_bytes"))
		}
	}
	if cg.cpuDir != "" {
		kv := cgReadKV(filepath.Join(cg.cpuDir, "cpu.stat"))
		r.CPUThrottled = kv["nr_throttled"]
		_, r.CPUCounted = kv["nr_throttled"]
		if cg.Version == 2 {
			r.CPUThrottledTime = time.Duration(kv["throttled_usec"]) * time.Microsecond
		} else {
			r.CPUThrottledTime = time.Duration(kv["throttled_time"]) // ns
		}
	}
	return r
}

func cgReadKV(path string) map[string]int64 {
	out := map[string]int64{}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 {
			if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				out[f[0]] = n
			}
		}
	}
	return out
}

func cgReadInt(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// Remove waits up to wait for the cgroup to have no process left, then
// removes its directories. It returns the first directory it could not
// remove, with why.
func (cg *Cgroup) Remove(wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for len(cg.Procs()) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	var errs []error
	for _, d := range cg.Dirs {
		if err := os.Remove(d); err != nil && !os.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}
