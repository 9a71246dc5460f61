package report

import "github.com/relaybench/relaybench/results"

// cancelledInFlight ends the Events Published line of a publish the user
// stopped ("28,881 accepted of 28,891 sent (99.96%; 10 cancelled in
// flight, before their OK)"): the events sent whose OK had not come when
// the run was stopped (sent, but neither accepted, refused, timed out nor
// failed), at most the phase's cancelled count, so that the gap between
// accepted and sent is not read as the relay's. "" when there are none.
func cancelledInFlight(c map[string]int64) string {
	n := c[results.CountSent] - c[results.CountAccepted] - c[results.CountRefused] - c[results.CountTimedOut] - c[results.CountFailed]
	if n = min(n, c["cancelled"]); n <= 0 {
		return ""
	}
	return "; " + fmtInt(n) + " cancelled in flight, before their OK"
}
