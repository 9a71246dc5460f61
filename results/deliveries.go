package results

// LiveDeliveries is what an execution segment of the subscribe workload
// (subscribe --segment I/N) records for relaybench merge. Every segment
// signs the same fresh events and knows every subscriber's filter, but
// only the merge knows which events the other segments got accepted: each
// segment records the fresh indexes its publishers got accepted (and
// refused), and for each of its subscribers which matching fresh events
// never arrived. The merge then computes the exact owed deliveries
// (Σ subscribers |matching ∩ accepted by any segment|), the delivered,
// missing and extra ones.
type LiveDeliveries struct {
	// The plan of the whole test, from which the merge tells whether fresh
	// event j matches global subscriber i (Matches).
	LivePlan
	// Accepted and Refused are the fresh indexes this segment published that
	// the relay accepted / refused (EncodeIndexSet over Events).
	Accepted string `json:"accepted"`
	Refused  string `json:"refused,omitempty"`
	// Bytes is the wire size of the whole list of fresh events (every
	// segment signs them all, each publishes its share).
	Bytes int64 `json:"bytes"`
	// Subs are this segment's subscribers (global index i mod N = segment).
	Subs []LiveSubscriber `json:"subs"`
}

// LivePlan is the subscription plan of a subscribe test: subscriber i's
// filter and fresh event j's channel tag and author follow from it.
type LivePlan struct {
	Events      int    `json:"events"`      // fresh events of the whole test
	Subscribers int    `json:"subscribers"` // of the whole test
	Channels    int    `json:"channels"`    // event j carries channel j mod Channels
	Authors     int    `json:"authors"`     // event j is signed by author j mod Authors
	Overlap     int    `json:"overlap"`     // channels (authors) each subscriber follows
	Filter      string `json:"filter"`      // tag, author, kind or mix
}

// Kind is subscriber i's filter kind: tag, author or kind.
func (p LivePlan) Kind(i int) string {
	if p.Filter == "mix" {
		return []string{"tag", "author", "kind"}[i%3]
	}
	return p.Filter
}

// Matches reports whether fresh event j matches subscriber i's filter:
// tag filters follow channels i … i+Overlap-1, author filters authors
// i … i+Overlap-1 (mod their counts), kind filters every event.
func (p LivePlan) Matches(i, j int) bool {
	switch p.Kind(i) {
	case "tag":
		return follows(i, j, p.Overlap, p.Channels)
	case "author":
		return follows(i, j, p.Overlap, p.Authors)
	}
	return true
}

func follows(i, j, overlap, n int) bool {
	if n <= 0 {
		return false
	}
	d := ((j % n) - (i % n) + n) % n // event j's item is item i+d
	return d < min(overlap, n)
}

// LiveSubscriber is one subscriber of a segment: how an owed delivery that
// never arrived ended, and which matching fresh events did not arrive
// (valid first copies after EOSE are received; every other matching event,
// accepted or not, is listed).
type LiveSubscriber struct {
	Index int `json:"i"`
	// MissAs is the outcome of an owed delivery that did not arrive
	// ("timed out", "connection lost", "not run", "cancelled": outcome
	// names), MissWhy the not-run reason.
	MissAs  string `json:"miss_as"`
	MissWhy string `json:"miss_why,omitempty"`
	// None: no matching event arrived (Missing is then empty); else
	// Missing lists the matching fresh indexes that did not arrive, or
	// MissingSet holds them as EncodeIndexSet when that is shorter.
	None       bool   `json:"none,omitempty"`
	Missing    []int  `json:"missing,omitempty"`
	MissingSet string `json:"missing_set,omitempty"`
}

// SetMissing records the missing indexes of n fresh events, as a list or
// a bitmap, whichever is shorter.
func (s *LiveSubscriber) SetMissing(idx []int, n int) {
	s.Missing, s.MissingSet = nil, ""
	if len(idx) == 0 {
		return
	}
	if len(idx)*6 > (n+7)/8*4/3+4 {
		s.MissingSet = EncodeIndexSet(idx, n)
		return
	}
	s.Missing = idx
}

// MissingOf returns the set of missing indexes of n fresh events (nil when
// None: the caller treats every matching index as missing).
func (s *LiveSubscriber) MissingOf(n int) ([]bool, error) {
	if s.MissingSet != "" {
		return DecodeIndexSet(s.MissingSet, n)
	}
	out := make([]bool, n)
	for _, j := range s.Missing {
		if j >= 0 && j < n {
			out[j] = true
		}
	}
	return out, nil
}
