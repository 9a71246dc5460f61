package numfmt

import "testing"

func TestGroup(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 3120: "3,120", 1234567: "1,234,567", -4500: "-4,500", -1234567: "-1,234,567"} {
		if got := Group(n); got != want {
			t.Errorf("Group(%d) = %q, want %q", n, got, want)
		}
	}
}
