//go:build cgo

package secp

import (
	"strings"
	"testing"
)

// A missing library is an error naming it, not a crash: the binary must run
// where libsecp256k1 is not installed.
func TestLoadMissingLibrary(t *testing.T) {
	_, err := loadFrom([]string{"libsecp256k1-missing.so.9"})
	if err == nil || !strings.Contains(err.Error(), "libsecp256k1-missing.so.9") {
		t.Fatalf("err = %v", err)
	}
	// A library without the symbols (libc) is rejected too.
	_, err = loadFrom([]string{"libc.so.6"})
	if err == nil || !strings.Contains(err.Error(), "lacks") {
		t.Fatalf("libc accepted as libsecp256k1: %v", err)
	}
}
