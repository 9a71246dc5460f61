package main

import (
	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/relay/embedded"
)

// The catalog's khatru-lmdb and khatru-sqlite3 run this binary's embedded
// relay: where the build left their stores out (the cgostores tag), they
// are skipped with a short reason ("this relaybench has no lmdb store:
// build relaybench with -tags cgostores"), repeated wherever the skip is named (its
// turn, the summary, the verdict); how to build them in, at length, is said
// once, in the first lines (storeHint, compare's saySkips).
func init() {
	if len(embedded.NotBuilt) == 0 {
		return
	}
	harness.SelfLacks = map[string]string{}
	for store := range embedded.NotBuilt {
		harness.SelfLacks[store] = "build relaybench with -tags cgostores"
	}
}

// storeHint is how to build in the embedded relay's store that spec runs
// when this build left it out ("" otherwise).
func storeHint(spec harness.Spec) string {
	if spec.Kind != harness.KindSelf {
		return ""
	}
	return embedded.NotBuilt[spec.Store]
}
