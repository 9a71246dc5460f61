package embedded

import "strings"

// NIP-50 search, as the native store does it: the query's words (those
// without a colon: "key:value" words are NIP-50 extensions, ignored) must
// all occur in the event's content, case-insensitively, as substrings. A
// query with no such word matches every event.

// searchTerms returns the lower-case words of a NIP-50 query.
func searchTerms(q string) []string {
	var terms []string
	for _, w := range strings.Fields(strings.ToLower(q)) {
		if !strings.Contains(w, ":") {
			terms = append(terms, w)
		}
	}
	if terms == nil {
		terms = []string{}
	}
	return terms
}

// contentMatches reports whether content holds every term.
func contentMatches(terms []string, content string) bool {
	if len(terms) == 0 {
		return true
	}
	c := strings.ToLower(content)
	for _, t := range terms {
		if !strings.Contains(c, t) {
			return false
		}
	}
	return true
}
