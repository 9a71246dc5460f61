package testkit

import (
	"encoding/csv"
	"io"
	"strings"
	"testing"
)

// WantInertCSV fails unless r holds a CSV that parses and has no cell a
// spreadsheet reads as a formula: none starting with =, + or @, nor with
// - followed by a call, a bang or a pipe.
func WantInertCSV(t testing.TB, r io.Reader) {
	t.Helper()
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		t.Fatalf("CSV does not parse: %v", err)
	}
	for _, row := range rows {
		for _, c := range row {
			if c != "" && strings.ContainsRune("=+@", rune(c[0])) {
				t.Errorf("CSV cell %q starts a formula", c)
			}
			if c != "" && c[0] == '-' && strings.ContainsAny(c, "(!|") {
				t.Errorf("CSV cell %q starts a formula", c)
			}
		}
	}
}
