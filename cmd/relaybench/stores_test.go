package main

import (
	"testing"

	"github.com/relaybench/relaybench/relay/embedded"
)

// buildTags are the -tags the relaybench binary of the tests is built
// with: those of this test binary (cgostores when it has the lmdb and
// sqlite3 stores), so that both have the same stores.
func buildTags() []string {
	if len(embedded.NotBuilt) == 0 {
		return []string{"-tags=cgostores"}
	}
	return nil
}

// needCgoStores skips a test that runs the lmdb or sqlite3 store when this
// build leaves them out.
func needCgoStores(t *testing.T) {
	t.Helper()
	if len(embedded.NotBuilt) > 0 {
		t.Skip("skipping: needs the lmdb and sqlite3 stores (go test -tags cgostores)")
	}
}
