// Package sysinfo describes the machine and the relaybench build, for the
// results file: every result says where and with what it was measured.
package sysinfo

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/relaybench/relaybench/results"
)

// Machine reads the CPU model, cores, memory and kernel of this machine.
func Machine() results.Machine {
	m := results.Machine{OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU()}
	m.Hostname, _ = os.Hostname()
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) >= 2 && fs[0] == "MemTotal:" {
				kb, _ := strconv.ParseInt(fs[1], 10, 64)
				m.MemBytes = kb * 1024
				break
			}
		}
		f.Close()
	}
	var u syscall.Utsname
	if syscall.Uname(&u) == nil {
		m.Kernel = cstr(u.Sysname[:]) + " " + cstr(u.Release[:])
	}
	return m
}

func cstr(b []int8) string {
	var sb strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}

// Version and Commit are set by the build (-ldflags "-X
// github.com/relaybench/relaybench/internal/sysinfo.Version=…"); Commit falls
// back to the VCS stamp Go embeds when building from a checkout.
var (
	Version = "dev"
	Commit  = ""
)

// Unstamped is the version of a build that carries no version at all:
// no -ldflags version, no module version and no VCS revision (go run, and
// go build with -buildvcs=false or outside a git checkout, leave them
// out). What cannot be known is said: the --version line, the summary's
// Tool line and the results file's tool version all read it.
const Unstamped = "dev, built without version control information: go build in a git checkout or go install …@VERSION stamps the version"

// ShortVersion is the build's version for a place with no room for why it
// is unknown (the embedded relay's NIP-11 version): "dev" for Unstamped.
func ShortVersion() string {
	if v := Tool("").Version; v != Unstamped {
		return v
	}
	return "dev"
}

// Tool describes this build.
func Tool(signer string) results.Tool {
	bi, _ := debug.ReadBuildInfo()
	return toolOf(bi, signer)
}

// toolOf is Tool from a build's information (nil: none).
func toolOf(bi *debug.BuildInfo, signer string) results.Tool {
	t := results.Tool{Name: "relaybench", Version: Version, Commit: Commit, GoVersion: runtime.Version(), Signer: signer}
	if bi != nil {
		if bi.GoVersion != "" {
			t.GoVersion = bi.GoVersion
		}
		if t.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			t.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && t.Commit == "" {
				t.Commit = s.Value
			}
			if s.Key == "vcs.modified" && s.Value == "true" && t.Commit != "" && !strings.HasSuffix(t.Commit, "-dirty") {
				t.Commit += "-dirty"
			}
		}
	}
	if t.Version == "dev" && t.Commit == "" {
		t.Version = Unstamped
	}
	return t
}

// VersionLine is what --version prints: the module version, the VCS
// revision (with -dirty for a modified tree) and the Go version of this
// build, from the build's own information ("relaybench v0.3.0 (commit
// 0123abc…, go1.26.8)"; Unstamped when it carries none).
func VersionLine() string {
	bi, _ := debug.ReadBuildInfo()
	return VersionLineOf(bi)
}

// VersionLineOf is the version line of the build bi describes (a binary's,
// read with debug/buildinfo; nil: none).
func VersionLineOf(bi *debug.BuildInfo) string {
	t := toolOf(bi, "")
	line := "relaybench " + t.Version
	var parts []string
	if t.Commit != "" {
		parts = append(parts, "commit "+t.Commit)
	}
	parts = append(parts, t.GoVersion)
	return line + " (" + strings.Join(parts, ", ") + ")"
}

// RSS is this process's resident memory now, in bytes (Linux; 0
// elsewhere or when unknown).
func RSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// MemoryLimit is the memory this process may use, in bytes: the machine's
// memory (MemTotal), or the container's cgroup limit when lower; 0 when
// unknown.
func MemoryLimit() int64 {
	limit := Machine().MemBytes
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && (limit == 0 || n < limit) {
			limit = n
		}
	}
	return limit
}

// OthersBusy says, when other processes competed for this machine's
// cores beside relaybench and the relay (sides: the cores they kept busy),
// so as a clause a note ends with ("the machine's 1-minute load average
// was 7.0 on 2 cores: other processes competed for its cores, and their
// waits count in these figures"); "" otherwise or when unknown. Its
// evidence is the 1-minute load average (runnable processes): at least one
// core above what the two sides account for (their CPU is counted on
// neither side), and at least the machine's cores (below that a core was
// free on average: nobody had to wait for one).
func OthersBusy(sides float64) string {
	la, err := strconv.ParseFloat(LoadAvg(), 64)
	if err != nil {
		return ""
	}
	return othersBusy(la, runtime.NumCPU(), sides)
}

// OthersCompeted is the judgement every OthersBusy clause states, which
// notes built on it are recognised by.
const OthersCompeted = "other processes competed for its cores"

// othersBusy is OthersBusy for a load average la on a machine of cores.
func othersBusy(la float64, cores int, sides float64) string {
	if la < sides+1 || la < float64(cores) || math.IsNaN(sides) {
		return ""
	}
	return fmt.Sprintf("%s: %s, and their waits count in these figures", loadClause(la, cores), OthersCompeted)
}

// LoadClause is the machine's 1-minute load average as every note quoting
// it words it ("the machine's 1-minute load average was 1.6 on 2 cores"),
// without OthersBusy's judgement; "" when unknown.
func LoadClause() string {
	la, err := strconv.ParseFloat(LoadAvg(), 64)
	if err != nil {
		return ""
	}
	return loadClause(la, runtime.NumCPU())
}

// loadClause words la with one decimal, or more when one would put it on
// the other side of cores than it is (1.96 on 2 cores is "1.96", not a
// "2.0" beside a note saying it was below the cores).
func loadClause(la float64, cores int) string {
	below := la < float64(cores)
	v := strconv.FormatFloat(la, 'f', 1, 64)
	for prec := 2; prec <= 3; prec++ {
		if r, _ := strconv.ParseFloat(v, 64); (r < float64(cores)) == below {
			break
		}
		v = strconv.FormatFloat(la, 'f', prec, 64)
	}
	return fmt.Sprintf("the machine's 1-minute load average was %s on %d cores", v, cores)
}

// LoadAvg is the machine's 1-minute load average as /proc/loadavg gives it
// ("" when unknown): runnable processes, relaybench and the relay included;
// others competing for the cores starve both sides.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return ""
}
