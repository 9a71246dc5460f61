package results

// The client memory idle subscriptions held (subscribe, and sweep's
// sizes): how much the process's resident memory grew while they opened,
// and that per subscription.
const (
	CountClientRSSIdle     = "client_rss_idle_bytes"
	CountClientBytesPerSub = "client_bytes_per_subscription"
)

// IdleRSSFloor is the least resident memory the idle subscriptions must
// hold for a figure: the process's resident memory moves by hundreds of
// KiB, up to about 1.5 MiB, between two readings even after a GC (10
// subscriptions measured from 168 KiB to 1.49 MiB), so below 8 MiB that
// noise is more than a fifth of the figure.
const IdleRSSFloor = 8 << 20

// BelowNoise reports whether counter k of counts is a reading under its
// noise floor: kept in the results file as it was read, and shown as a
// figure in no report (the summaries, tables, CSV and JSON), since the
// phase's note says it is not measurable. The client memory of
// idle subscriptions is such a reading unless they held IdleRSSFloor and
// a figure per subscription was given (the workload gives one only then;
// the rule also covers files written before it did, and merged files,
// whose segments' readings are summed).
func BelowNoise(counts map[string]int64, k string) bool {
	switch k {
	case CountClientRSSIdle, CountClientBytesPerSub:
		return counts[CountClientRSSIdle] < IdleRSSFloor || counts[CountClientBytesPerSub] <= 0
	}
	return false
}
