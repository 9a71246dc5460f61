package testkit

import "os"

// Full reports whether RELAYBENCH_FULL=1 asks for the full matrices: the
// tests that repeat a case over several seeds, stores or relays run a
// representative subset by default (each distinct behaviour once) and
// every repetition with it.
func Full() bool { return os.Getenv("RELAYBENCH_FULL") == "1" }
