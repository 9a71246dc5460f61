package corpus

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"
)

// TestGenMemoryProbe generates $RELAYBENCH_GENMEM events into a temporary
// cache directory and logs the Go heap as it goes (and writes a heap
// profile at 90% to $RELAYBENCH_GENMEM_PROFILE when set). A measuring aid,
// skipped unless the variable is set:
//
//	RELAYBENCH_GENMEM=1000000 go test ./corpus/ -run GenMemoryProbe -v -count=1
func TestGenMemoryProbe(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("RELAYBENCH_GENMEM"))
	if n <= 0 {
		t.Skip("RELAYBENCH_GENMEM not set")
	}
	p := DefaultParams()
	p.Events = n
	p.Anchor = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	profiled := false
	next := n / 10
	var peak uint64
	c, err := Load(context.Background(), p, Options{CacheDir: t.TempDir(), Progress: func(done, total int) {
		if done < next {
			return
		}
		next += n / 10
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		rss := vmRSS()
		peak = max(peak, rss)
		t.Logf("%3d%%: heap alloc %4d MB, inuse %4d MB, sys %4d MB, next GC %4d MB, RSS %4d MB",
			100*done/total, ms.HeapAlloc>>20, ms.HeapInuse>>20, ms.Sys>>20, ms.NextGC>>20, rss>>20)
		if path := os.Getenv("RELAYBENCH_GENMEM_PROFILE"); path != "" && !profiled && done >= 9*n/10 {
			profiled = true
			f, err := os.Create(path)
			if err == nil {
				runtime.GC()
				pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d events signed in %s; %s", c.Len(), c.SignDuration.Round(time.Millisecond), procStatus("VmHWM"))
}

func vmRSS() uint64 {
	s := procStatus("VmRSS")
	f := bytes.Fields([]byte(s))
	if len(f) < 2 {
		return 0
	}
	kb, _ := strconv.ParseUint(string(f[1]), 10, 64)
	return kb << 10
}

func procStatus(field string) string {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range bytes.Split(b, []byte("\n")) {
		if bytes.HasPrefix(l, []byte(field+":")) {
			return string(bytes.Join(bytes.Fields(l), []byte(" ")))
		}
	}
	return ""
}
