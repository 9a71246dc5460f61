package corpus

import (
	"slices"
	"testing"
)

func TestParseSegment(t *testing.T) {
	good := map[string]Segment{
		"":        {},
		"0/1":     {0, 1},
		"0/3":     {0, 3},
		"2/3":     {2, 3},
		"0:1/4":   {0, 4},
		"1/4:2/4": {1, 4},
		"1/4:1/2": {1, 4},
		"3/4:1":   {3, 4},
		"0:1":     {0, 1},
		"2/6:1/2": {2, 6},
	}
	for v, want := range good {
		got, err := ParseSegment(v)
		if err != nil || got != want {
			t.Errorf("ParseSegment(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"3/3", "-1/3", "1/0", "x/3", "1", "0:2/3", "1/2:1/4", "1/3:1/3", "0/20000"} {
		if s, err := ParseSegment(v); err == nil {
			t.Errorf("ParseSegment(%q) = %v, want an error", v, s)
		}
	}
}

// TestSegmentsPartition: for any N, the segments' shares of n items are
// disjoint, cover all of them, and their sizes are Share and Split.
func TestSegmentsPartition(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 10, 100, 1001} {
		for count := 1; count <= 8; count++ {
			var all []int
			total := 0
			for i := range count {
				s := Segment{Index: i, Count: count}
				idx := s.Indexes(n)
				if len(idx) != s.Share(n) || s.Split(n) != s.Share(n) {
					t.Fatalf("n=%d %v: %d indexes, Share %d, Split %d", n, s, len(idx), s.Share(n), s.Split(n))
				}
				for _, k := range idx {
					if !s.Owns(int64(k)) {
						t.Fatalf("%v does not own its index %d", s, k)
					}
				}
				items := make([]int, n)
				for k := range items {
					items[k] = k
				}
				if !slices.Equal(Pick(s, items), idx) {
					t.Fatalf("n=%d %v: Pick differs from Indexes", n, s)
				}
				all = append(all, idx...)
				total += s.Split(n)
			}
			slices.Sort(all)
			if len(all) != n || total != n {
				t.Fatalf("n=%d N=%d: union has %d items, splits add to %d", n, count, len(all), total)
			}
			for k, v := range all {
				if v != k {
					t.Fatalf("n=%d N=%d: item %d missing or twice", n, count, k)
				}
			}
		}
	}
	// remainder to the first segments: 10 over 3 is 4, 3, 3
	for i, want := range []int{4, 3, 3} {
		if got := (Segment{Index: i, Count: 3}).Split(10); got != want {
			t.Errorf("Split(10) of %d/3 = %d, want %d", i, got, want)
		}
	}
	if got := (Segment{Index: 2, Count: 3}).AtLeastOne(1); got != 1 {
		t.Errorf("AtLeastOne(1) of 2/3 = %d", got)
	}
	if !slices.Equal(Pick(Segment{Index: 1, Count: 3}, []string{"a", "b", "c", "d", "e"}), []string{"b", "e"}) {
		t.Error("Pick 1/3")
	}
}
