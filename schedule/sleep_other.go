//go:build !linux

package schedule

import "time"

// nanosleep falls back to the runtime's sleep outside Linux.
func nanosleep(ns int64) { time.Sleep(time.Duration(ns)) }
