package runner

import (
	"fmt"
	"net"
	"net/url"
)

// CheckTarget validates a relay URL and refuses any host outside
// 127.0.0.0/8 and ::1 unless operated is set (the user stated they operate
// that relay). Load tests aimed at other people's relays are abuse.
func CheckTarget(raw string, operated bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("relay URL %q: %v", raw, err)
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return fmt.Errorf("relay URL %q: scheme must be ws:// or wss://", raw)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("relay URL %q: no host", raw)
	}
	if IsLoopback(host) || operated {
		return nil
	}
	return fmt.Errorf("relay %s is not on this machine (127.0.0.0/8 or ::1): relaybench sends heavy load and refuses other people's relays; pass --i-operate-this-relay if you run it", host)
}

// IsLoopback reports whether host is "localhost" or a loopback IP literal.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
