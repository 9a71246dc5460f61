package main

import (
	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/relay/embedded"
)

// The catalog's khatru-lmdb and khatru-sqlite3 run this binary's embedded
// relay: where the build left their stores out (the cgostores tag), they
// are skipped with one line saying how to build them in.
func init() { harness.SelfLacks = embedded.NotBuilt }
