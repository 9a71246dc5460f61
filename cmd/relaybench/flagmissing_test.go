package main

import (
	"strings"
	"testing"
)

// TestMissingFlagValueSaysWhatItNeeds: a flag given no value is a usage
// error in one line naming what the flag needs, for every kind of flag,
// where kong said `--charts: expected string value but got "EOL" (<EOL>)`.
func TestMissingFlagValueSaysWhatItNeeds(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "x.json", "--charts"}, "relaybench: --charts needs a value: DIR (relaybench report --help)\n"},
		{[]string{"report", "x.json", "-o"}, "relaybench: -o needs a value: FILE (relaybench report --help)\n"},
		{[]string{"run", "--events"}, "relaybench: --events needs a value: a number (relaybench run --help)\n"},
		{[]string{"run", "--timeout"}, "relaybench: --timeout needs a value: a duration (e.g. 10s) (relaybench run --help)\n"},
		{[]string{"compare", "--relays"}, "relaybench: --relays needs a value: NAME,… (relaybench compare --help)\n"},
		{[]string{"run", "--relay", "--events", "5"}, "relaybench: --relay needs a value: RELAY; --events is a flag (--relay=--events if it is the value) (relaybench run --help)\n"},
	} {
		code, _, stderr := runHere(t, c.args...)
		if code != 2 || stderr != c.want || strings.Contains(stderr, "EOL") {
			t.Errorf("%v: exit %d, stderr %q; want 2, %q", c.args, code, stderr, c.want)
		}
	}
}
