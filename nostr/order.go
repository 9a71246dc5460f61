package nostr

import "sort"

// SortNewestFirst orders events the way NIP-01 asks relays to return them
// for a limited query: created_at descending, ties broken by id ascending
// (the order most relays use; relays may differ on ties, which verification
// tolerates).
func SortNewestFirst(evs []*Event) {
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].CreatedAt != evs[j].CreatedAt {
			return evs[i].CreatedAt > evs[j].CreatedAt
		}
		return evs[i].ID < evs[j].ID
	})
}
