package testkit

import (
	"flag"
	"strconv"
)

// ParallelAtLeast raises -test.parallel (default GOMAXPROCS) to n unless
// the command line gave it: for a package whose parallel tests mostly
// wait (on relays, deadlines, --start-at), not on the CPU. Call it from
// TestMain, before m.Run.
func ParallelAtLeast(n int) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	f := flag.Lookup("test.parallel")
	if f == nil || given {
		return
	}
	if cur, err := strconv.Atoi(f.Value.String()); err == nil && cur < n {
		f.Value.Set(strconv.Itoa(n))
	}
}
