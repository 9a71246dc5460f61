// Package nip11 fetches a relay's NIP-11 information document and waits for
// a relay to accept WebSocket connections.
//
// Relays disagree on types (numbers as strings, supported_nips as strings,
// missing fields), so decoding is tolerant: a field of an unexpected type is
// left at its zero value rather than failing the whole document.
package nip11

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/relaybench/relaybench/internal/safe"
)

// DefaultTimeout bounds Fetch when ctx has no earlier deadline.
const DefaultTimeout = 5 * time.Second

// maxDocument is the largest document Fetch reads.
const maxDocument = 1 << 20

// Limitation is the NIP-11 "limitation" object; zero means "not announced".
type Limitation struct {
	MaxMessageLength int
	MaxSubscriptions int
	MaxLimit         int
	MaxEventTags     int
	MaxContentLength int
	AuthRequired     bool
	PaymentRequired  bool
}

// Info is the part of a relay information document relaybench uses.
type Info struct {
	Name          string
	Description   string
	Software      string
	Version       string
	SupportedNIPs []any
	Limitation    Limitation
}

// ErrNoDocument is wrapped by Fetch's error when the relay answered but
// served no information document (an HTTP error status, or a body that is
// not a JSON object). Callers may treat it as non-fatal.
var ErrNoDocument = errors.New("no NIP-11 document")

// HTTPURL converts a ws:// or wss:// relay URL to its http(s) form.
func HTTPURL(wsURL string) (string, error) {
	u, err := url.Parse(wsURL)
	if err != nil {
		return "", fmt.Errorf("relay URL %q: %v", wsURL, err)
	}
	switch u.Scheme {
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	case "http", "https":
	default:
		return "", fmt.Errorf("relay URL %q: scheme must be ws or wss", wsURL)
	}
	if u.Host == "" {
		return "", fmt.Errorf("relay URL %q: no host", wsURL)
	}
	return u.String(), nil
}

// Fetch GETs the relay's information document with
// Accept: application/nostr+json. It returns the decoded Info and the raw
// document. The deadline is ctx's or DefaultTimeout, whichever is earlier.
func Fetch(ctx context.Context, wsURL string) (*Info, json.RawMessage, error) {
	httpURL, err := HTTPURL(wsURL)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	resp, err := Get(ctx, httpURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, nil, fmt.Errorf("NIP-11 %s: no answer before the deadline", wsURL)
		}
		return nil, nil, fmt.Errorf("NIP-11 %s: %v", wsURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
	if err != nil {
		return nil, nil, fmt.Errorf("NIP-11 %s: reading the document: %v", wsURL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("NIP-11 %s: HTTP %d: %w", wsURL, resp.StatusCode, ErrNoDocument)
	}
	info, err := Parse(body)
	if err != nil {
		return nil, nil, fmt.Errorf("NIP-11 %s: %w", wsURL, err)
	}
	return info, json.RawMessage(body), nil
}

// Get sends the NIP-11 request (GET with Accept: application/nostr+json)
// to the relay at url (ws, wss, http or https), bounded by ctx alone. The
// caller closes the response's body.
func Get(ctx context.Context, url string) (*http.Response, error) {
	httpURL, err := HTTPURL(url)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, httpURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/nostr+json")
	return http.DefaultClient.Do(req)
}

// Parse decodes a document tolerantly. It fails (wrapping ErrNoDocument)
// only when doc is not a JSON object.
func Parse(doc []byte) (*Info, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil || m == nil {
		return nil, fmt.Errorf("body is not a JSON object: %w", ErrNoDocument)
	}
	// Strings from a relay are untrusted: made printable here, once, so no
	// table, report or terminal shows a raw newline or escape sequence.
	info := &Info{
		Name:        safe.Line(asString(m["name"])),
		Description: safe.Line(asString(m["description"])),
		Software:    safe.Line(asString(m["software"])),
		Version:     safe.Line(asString(m["version"])),
	}
	var nips []any
	if json.Unmarshal(m["supported_nips"], &nips) == nil {
		info.SupportedNIPs = nips
	}
	var lim map[string]json.RawMessage
	if json.Unmarshal(m["limitation"], &lim) == nil {
		info.Limitation = Limitation{
			MaxMessageLength: asInt(lim["max_message_length"]),
			MaxSubscriptions: asInt(lim["max_subscriptions"]),
			MaxLimit:         asInt(lim["max_limit"]),
			MaxEventTags:     asInt(lim["max_event_tags"]),
			MaxContentLength: asInt(lim["max_content_length"]),
			AuthRequired:     asBool(lim["auth_required"]),
			PaymentRequired:  asBool(lim["payment_required"]),
		}
	}
	return info, nil
}

// SupportsNIP reports whether n is listed in supported_nips (as a number or
// a numeric string).
func (i *Info) SupportsNIP(n int) bool {
	for _, v := range i.SupportedNIPs {
		switch x := v.(type) {
		case float64:
			if x == float64(n) {
				return true
			}
		case string:
			if k, err := strconv.Atoi(strings.TrimSpace(x)); err == nil && k == n {
				return true
			}
		}
	}
	return false
}

// decode is raw decoded as a T, and whether it is one.
func decode[T any](raw json.RawMessage) (T, bool) {
	var v T
	return v, json.Unmarshal(raw, &v) == nil
}

func asString(raw json.RawMessage) string {
	if s, ok := decode[string](raw); ok {
		return s
	}
	if f, ok := decode[float64](raw); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return ""
}

func asInt(raw json.RawMessage) int {
	f, ok := decode[float64](raw)
	if !ok {
		s, ok := decode[string](raw)
		if !ok {
			return 0
		}
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
			return 0
		}
	}
	if f < 0 || f > math.MaxInt32 || math.IsNaN(f) {
		return 0
	}
	return int(f)
}

func asBool(raw json.RawMessage) bool {
	if b, ok := decode[bool](raw); ok {
		return b
	}
	if s, ok := decode[string](raw); ok {
		b, _ := strconv.ParseBool(strings.TrimSpace(s))
		return b
	}
	if f, ok := decode[float64](raw); ok {
		return f != 0
	}
	return false
}

// WaitReady polls until the relay accepts a WebSocket upgrade (the
// connection is closed at once), backing off from 20 ms to 500 ms between
// attempts. It does not need NIP-11. When ctx ends first it returns the last
// dial error.
func WaitReady(ctx context.Context, wsURL string) error {
	backoff := 20 * time.Millisecond
	var last error
	for {
		attempt, cancel := context.WithTimeout(ctx, 2*time.Second)
		ws, _, err := websocket.Dial(attempt, wsURL, nil)
		cancel()
		if err == nil {
			ws.CloseNow()
			return nil
		}
		if ctx.Err() == nil || last == nil {
			last = err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("relay %s not ready: %v", wsURL, last)
		case <-t.C:
		}
		backoff = min(backoff*2, 500*time.Millisecond)
	}
}
