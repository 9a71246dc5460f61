package results

import (
	"strings"
	"testing"
)

func TestIndexSetAndIDsRoundTrip(t *testing.T) {
	s := EncodeIndexSet([]int{0, 3, 9, 10, -1, 11}, 11)
	set, err := DecodeIndexSet(s, 11)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range set {
		if want := i == 0 || i == 3 || i == 9 || i == 10; in != want {
			t.Fatalf("index %d: %v, want %v", i, in, want)
		}
	}
	if _, err := DecodeIndexSet(s, 30); err == nil {
		t.Fatal("a set of another size decoded")
	}
	a, b := strings.Repeat("ab", 32), strings.Repeat("0f", 32)
	keys, err := DecodeIDs(EncodeIDs([]string{a, b, a}))
	if err != nil || len(keys) != 3 || keys[0] != IDKey(a) || keys[1] != IDKey(b) || keys[2] != keys[0] || keys[0] == keys[1] {
		t.Fatalf("ids %q %v", keys, err)
	}
	if len(EncodeIndexSet(nil, 10000)) != 1668 {
		t.Fatalf("10,000 indexes take %d characters", len(EncodeIndexSet(nil, 10000)))
	}
}
