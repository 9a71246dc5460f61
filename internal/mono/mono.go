// Package mono is the one monotonic clock every measurement in relaybench
// uses: nanoseconds since the process started. Send times, receive times and
// intended times taken on different goroutines are comparable.
package mono

import "time"

var start = time.Now()

// Now returns monotonic nanoseconds since process start.
func Now() int64 { return int64(time.Since(start)) }

// Since returns the nanoseconds elapsed since t (a value from Now).
func Since(t int64) int64 { return Now() - t }

// Time converts a value from Now to wall-clock time.
func Time(t int64) time.Time { return start.Add(time.Duration(t)) }

// FromTime converts a wall-clock time to the monotonic scale.
func FromTime(t time.Time) int64 { return int64(t.Sub(start)) }
