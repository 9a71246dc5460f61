package safe

import (
	"strings"
	"testing"
)

func TestLine(t *testing.T) {
	cases := map[string]string{
		"0.66.0\n":                 "0.66.0",
		"a\nb":                     `a\nb`,
		"red \x1b[31mALERT\x1b[0m": `red \x1b[31mALERT\x1b[0m`,
		"evil\u202egnp.exe":        `evil\u202egnp.exe`,
		"bad \xff utf8":            "bad \ufffd utf8",
		"strfry 1.0 ⚡ ünïcode":     "strfry 1.0 ⚡ ünïcode",
		"tab\there":                `tab\there`,
		"nul\x00":                  `nul\x00`,
		"line\u2028sep":            `line\u2028sep`,
		"  spaced  ":               "spaced",
	}
	for in, want := range cases {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
	long := Line(strings.Repeat("x", 1000))
	if !strings.HasSuffix(long, "…") || len([]rune(long)) != MaxRunes+1 {
		t.Errorf("long string not capped: %d runes", len([]rune(long)))
	}
}
