package main

import (
	"testing"

	"github.com/relaybench/relaybench/relay/embedded"
)

// needCgoStores skips a test that runs the lmdb or sqlite3 store when this
// build leaves them out.
func needCgoStores(t *testing.T) {
	t.Helper()
	if len(embedded.NotBuilt) > 0 {
		t.Skip("skipping: needs the lmdb and sqlite3 stores (go test -tags cgostores)")
	}
}
