package workload

import (
	"regexp"
	"slices"
	"strings"
)

// partFigure is a figure in a note, with its unit: "18.8ms", "1,000", "5%".
var partFigure = regexp.MustCompile(`[0-9][0-9.,]*(?:ns|µs|ms|s|%)?`)

// pairPartNotes gives once a note the publishing side has alone and
// together ("publish/alone: events went out late: p99 18.8ms behind …",
// "publish/together: … p99 5.26ms behind …"): "publish: events went out
// late: p99 18.8ms alone, 5.26ms together behind …", or "publish (alone
// and together): …" when the two say the same. Other notes stay as they
// are, in their order.
func pairPartNotes(notes []string) []string {
	const alone, tog = "publish/alone: ", "publish/together: "
	out := make([]string, 0, len(notes))
	used := map[int]bool{}
	for i, n := range notes {
		if used[i] {
			continue
		}
		a, ok := strings.CutPrefix(n, alone)
		j := slices.IndexFunc(notes, func(m string) bool {
			t, ok := strings.CutPrefix(m, tog)
			return ok && sameWords(a, t)
		})
		if !ok || j < 0 || used[j] {
			out = append(out, n)
			continue
		}
		used[j] = true
		t := strings.TrimPrefix(notes[j], tog)
		if a == t {
			out = append(out, "publish (alone and together): "+a)
			continue
		}
		out = append(out, "publish: "+pairFigures(a, t))
	}
	return out
}

// sameWords reports whether notes a and b differ in their figures only.
func sameWords(a, b string) bool {
	return partFigure.ReplaceAllString(a, "#") == partFigure.ReplaceAllString(b, "#")
}

// pairFigures is note a (alone) with each figure that b (together) has
// otherwise written "A alone, B together"; a and b differ in figures only.
func pairFigures(a, b string) string {
	fb := partFigure.FindAllString(b, -1)
	k := 0
	return partFigure.ReplaceAllStringFunc(a, func(f string) string {
		g := fb[k]
		k++
		if f == g {
			return f
		}
		return f + " alone, " + g + " together"
	})
}
