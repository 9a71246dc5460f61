package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReportSkippedFileAgrees: `report bad.json results.json` says the one
// file it could not read "is" not in the report (it said "1 of 2 results
// files could not be read and are not in the report").
func TestReportSkippedFileAgrees(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := segmentFile(t, dir, 0, 2, []int64{1000})
	fs, _, skipped, err := readSome([]string{bad, good})
	if err != nil || len(fs) != 1 || skipped == nil {
		t.Fatalf("read %d files, skipped %v, error %v", len(fs), skipped, err)
	}
	if want := "1 of 2 results files could not be read and is not in the report (named above)"; skipped.Error() != want {
		t.Errorf("skipped: %q, want %q", skipped, want)
	}
}
