// Package fakenip is a small in-memory relay for the tests of the NIP-45
// COUNT and NIP-50 search workloads, with knobs that make its counts and
// searches wrong in the ways relays get them wrong. It stores every EVENT
// (OK true, no checks), answers REQs newest first within their limit (a
// search: events whose content holds the term, case-insensitive) and COUNTs
// with the number of matching events. It listens on 127.0.0.1.
package fakenip

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/relaybench/relaybench/internal/testkit"
	"github.com/relaybench/relaybench/nostr"
)

// Config sets how the relay answers.
type Config struct {
	// NIPs announced in NIP-11 supported_nips (nil: 1, 11, 45, 50).
	NIPs []int
	// CountDelta is added to every count (0: right counts).
	CountDelta int64
	// BareCount answers ["COUNT",id,n] instead of ["COUNT",id,{"count":n}].
	BareCount bool
	// Approximate marks every count "approximate": true.
	Approximate bool
	// SearchIgnoresTime drops since/until from search filters.
	SearchIgnoresTime bool
	// NoCount answers COUNT with CLOSED "unsupported: ...".
	NoCount bool
	// SilentCount never answers a COUNT.
	SilentCount bool
}

// Relay is a running fake relay.
type Relay struct {
	URL string
	cfg Config
	srv *httptest.Server
	mu  sync.Mutex
	evs []*nostr.Event
	raw map[string][]byte
}

// Start starts a relay; Close stops it.
func Start(cfg Config) *Relay {
	if cfg.NIPs == nil {
		cfg.NIPs = []int{1, 11, 45, 50}
	}
	r := &Relay{cfg: cfg, raw: map[string][]byte{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = "ws" + strings.TrimPrefix(r.srv.URL, "http")
	return r
}

// Close stops the relay.
func (r *Relay) Close() { r.srv.Close() }

func (r *Relay) serve(w http.ResponseWriter, req *http.Request) {
	if req.Header.Get("Upgrade") == "" {
		w.Header().Set("Content-Type", "application/nostr+json")
		json.NewEncoder(w).Encode(map[string]any{"name": "fakenip", "software": "fakenip", "supported_nips": r.cfg.NIPs,
			"limitation": map[string]any{"max_limit": 500}})
		return
	}
	ws, err := websocket.Accept(w, req, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return
	}
	defer ws.CloseNow()
	ws.SetReadLimit(16 << 20)
	ctx := context.Background()
	send := func(parts ...any) error {
		b, _ := json.Marshal(parts)
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return ws.Write(wctx, websocket.MessageText, b)
	}
	testkit.Frames(ctx, ws, nil, func(f testkit.Frame) bool { return r.handle(f, send) })
}

// handle answers one message; false: the connection is gone.
func (r *Relay) handle(f testkit.Frame, send func(parts ...any) error) bool {
	arr := f.Msg
	var id string
	switch f.Label {
	case "EVENT":
		e, err := nostr.ParseEvent(arr[1])
		if err != nil {
			return true
		}
		r.mu.Lock()
		if _, dup := r.raw[e.ID]; !dup {
			r.raw[e.ID] = append([]byte(nil), arr[1]...)
			r.evs = append(r.evs, e)
		}
		r.mu.Unlock()
		return send("OK", e.ID, true, "") == nil
	case "REQ", "COUNT":
		json.Unmarshal(arr[1], &id)
		var filters []nostr.Filter
		for _, fr := range arr[2:] {
			var flt nostr.Filter
			if json.Unmarshal(fr, &flt) == nil {
				filters = append(filters, flt)
			}
		}
		if f.Label == "REQ" {
			for _, raw := range r.match(filters) {
				if send("EVENT", id, raw) != nil {
					return false
				}
			}
			return send("EOSE", id) == nil
		}
		return r.count(id, filters, send)
	}
	return true
}

// count answers a COUNT as the knobs say; false: the connection is gone.
func (r *Relay) count(id string, filters []nostr.Filter, send func(parts ...any) error) bool {
	if r.cfg.SilentCount {
		return true
	}
	if r.cfg.NoCount {
		send("CLOSED", id, "unsupported: no NIP-45 here")
		return true
	}
	n := int64(len(r.match(stripLimits(filters)))) + r.cfg.CountDelta
	var ans any = map[string]any{"count": n}
	switch {
	case r.cfg.BareCount:
		ans = n
	case r.cfg.Approximate:
		ans = map[string]any{"count": n, "approximate": true}
	}
	return send("COUNT", id, ans) == nil
}

func stripLimits(fs []nostr.Filter) []nostr.Filter {
	out := make([]nostr.Filter, len(fs))
	for i, f := range fs {
		f.Limit = 0
		out[i] = f
	}
	return out
}

// match returns the raw events matching any filter, newest first per filter
// within its limit (a search filter: content holding the term).
func (r *Relay) match(fs []nostr.Filter) []json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	var out []json.RawMessage
	for _, f := range fs {
		if f.Search != "" && r.cfg.SearchIgnoresTime {
			f.Since, f.Until = nil, nil
		}
		var hits []*nostr.Event
		for _, e := range r.evs {
			if f.Matches(e) && (f.Search == "" || strings.Contains(strings.ToLower(e.Content), strings.ToLower(f.Search))) {
				hits = append(hits, e)
			}
		}
		nostr.SortNewestFirst(hits)
		if f.Limit > 0 && len(hits) > f.Limit {
			hits = hits[:f.Limit]
		}
		for _, e := range hits {
			if !seen[e.ID] {
				seen[e.ID] = true
				out = append(out, r.raw[e.ID])
			}
		}
	}
	return out
}
