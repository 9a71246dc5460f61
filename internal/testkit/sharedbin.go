package testkit

import (
	"os"
	"path/filepath"
)

// SharedBinDir is the folder of the real relay binaries that the tests
// comparing real relays start (named like the catalog's relays: strfry,
// nostr-rs-relay-sqlite, …): $RELAYBENCH_SHARED_BIN, else
// $RELAYBENCH_BIN_DIR, else shared/relays/bin beside the checkout (in the
// folder that holds the module's root). A test skips in one line when the
// binary it needs is not there.
func SharedBinDir() string {
	for _, v := range []string{"RELAYBENCH_SHARED_BIN", "RELAYBENCH_BIN_DIR"} {
		if d := os.Getenv(v); d != "" {
			return d
		}
	}
	return filepath.Join(filepath.Dir(moduleRoot()), "shared", "relays", "bin")
}

// moduleRoot is the folder of the go.mod above the test's package (go test
// runs a test in its package's folder), else that folder.
func moduleRoot() string {
	wd, _ := os.Getwd()
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return wd
		}
	}
}
