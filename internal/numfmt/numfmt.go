// Package numfmt formats numbers for people.
package numfmt

import (
	"strconv"
	"strings"
)

// Group formats n with thousands separators: 3120 → "3,120", -4500 →
// "-4,500".
func Group(n int64) string {
	s := strconv.FormatInt(n, 10)
	digits := strings.TrimPrefix(s, "-")
	var b strings.Builder
	b.WriteString(s[:len(s)-len(digits)])
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
