package conformance

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/results"
)

var nip42Checks = []string{"nip42.auth-ok", "nip42.auth-accepted", "nip42.wrong-challenge-refused",
	"nip42.not-broadcast", "nip42.auth-required-prefix"}

// Behind a NIP-42 gate (a challenge at connect, every EVENT and REQ
// refused "auth-required:" until a valid AUTH) over the test relay, which
// stores and delivers a kind-22242 EVENT like any other: the AUTH checks
// pass, and the kind-22242 event delivered to a subscription fails
// nip42.not-broadcast. A gate that refuses every AUTH gets
// nip42.auth-accepted named, and still refuses a wrong challenge.
func TestNIP42ChecksBehindGate(t *testing.T) {
	r := testrelay.New(testrelay.Config{Verify: true})
	defer r.Close()
	info := &nip11.Info{SupportedNIPs: []any{1.0, 42.0}, Limitation: nip11.Limitation{AuthRequired: true}}
	for _, refuse := range []bool{false, true} {
		g := newAuthGate(t, r.URL(), refuse)
		o := testOpts
		o.Auth, o.Only = authKey(t), nip42Checks
		got := runWith(t, g.url, info, o)
		want := map[string]results.CheckStatus{
			"nip42.auth-ok":                 results.CheckPass,
			"nip42.auth-accepted":           results.CheckPass,
			"nip42.wrong-challenge-refused": results.CheckPass,
			"nip42.not-broadcast":           results.CheckFail,
			"nip42.auth-required-prefix":    results.CheckPass,
		}
		if refuse {
			// the subscriber cannot authenticate: its REQ stays refused
			want["nip42.auth-accepted"], want["nip42.not-broadcast"] = results.CheckNamed, results.CheckNotRun
		}
		for id, w := range want {
			if c := got[id]; c.Status != w {
				t.Errorf("refuse %v: %s: %s, want %s", refuse, id, describe(c), w)
			}
		}
	}
}

// Without limitation.auth_required in NIP-11, nip42.auth-required-prefix
// has nothing to judge: not announced, nothing sent.
func TestAuthRequiredPrefixNeedsLimitation(t *testing.T) {
	r := testrelay.New(testrelay.Config{})
	defer r.Close()
	got := runAll(t, r.URL(), &nip11.Info{SupportedNIPs: []any{42.0}}, "nip42.auth-required-prefix")
	if c := got["nip42.auth-required-prefix"]; c.Status != results.CheckNotAnnounced || len(c.Evidence) > 0 {
		t.Errorf("%s, want not announced with no evidence", describe(c))
	}
}

// A NIP-11 server without CORS headers fails nip11.cors (a MUST), naming
// the missing headers; one whose supported_nips are strings gets
// nip11.document named; the relay's strings are kept as evidence, bounded.
func TestNIP11Checks(t *testing.T) {
	for _, tc := range []struct {
		name     string
		nips     any
		cors     bool
		document results.CheckStatus
		corsWant results.CheckStatus
	}{
		{"no CORS", []int{1, 11}, false, results.CheckPass, results.CheckFail},
		{"nips as strings", []string{"1", "11"}, true, results.CheckNamed, results.CheckPass},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tc.cors {
				w.Header().Set("Access-Control-Allow-Origin", "*")
				if r.Method == http.MethodOptions {
					w.Header().Set("Access-Control-Allow-Headers", "accept")
					w.Header().Set("Access-Control-Allow-Methods", "GET, OPTIONS")
					return
				}
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"name": strings.Repeat("<b>", 500), "supported_nips": tc.nips})
		}))
		url := "ws" + strings.TrimPrefix(srv.URL, "http")
		got := runAll(t, url, &nip11.Info{SupportedNIPs: []any{11.0}}, "nip11.document", "nip11.cors")
		srv.Close()
		if c := got["nip11.document"]; c.Status != tc.document {
			t.Errorf("%s: nip11.document: %s, want %s", tc.name, describe(c), tc.document)
		}
		c := got["nip11.cors"]
		if c.Status != tc.corsWant {
			t.Errorf("%s: nip11.cors: %s, want %s", tc.name, describe(c), tc.corsWant)
		}
		if tc.corsWant == results.CheckFail && !strings.Contains(c.Detail, "Access-Control-Allow-Origin, Access-Control-Allow-Headers, Access-Control-Allow-Methods") {
			t.Errorf("%s: detail %q does not name the missing headers", tc.name, c.Detail)
		}
		for _, l := range c.Evidence {
			if len(l) > evidenceFrame+8 {
				t.Errorf("%s: evidence line of %d bytes", tc.name, len(l))
			}
		}
	}
}

// The embedded relay (native store) passes every check of the NIPs it
// announces beside NIP-01 (11, 42, 45, 50, 77), except what it names:
// no challenge at connect (NIP-42 "CAN"), and, announcing no
// limitation.auth_required, nothing to refuse.
func TestEmbeddedNativeNIPChecks(t *testing.T) {
	integration(t)
	url, info := embedded(t, "native")
	var ids []string
	for _, c := range Checks() {
		if c.Needs == 11 || c.Needs == 42 || c.Needs == 45 || c.Needs == 50 || c.Needs == 77 {
			ids = append(ids, c.ID)
		}
	}
	for id, c := range runAll(t, url, info, ids...) {
		want := results.CheckPass
		switch id {
		case "nip42.auth-accepted":
			want = results.CheckNamed
		case "nip42.auth-required-prefix":
			want = results.CheckNotAnnounced
		}
		if c.Status != want {
			t.Errorf("%s: %s, want %s", id, describe(c), want)
		}
	}
}

// countRelay is a fake NIP-45 relay: every EVENT is answered OK true, a
// COUNT with a malformed filter ({"kinds":"one"}) gets malformed's answer,
// any other COUNT ["COUNT",id,answer(number of filters)]; nothing else is
// answered.
func countRelay(t *testing.T, answer func(filters int) string, malformed func(id string) string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			_, msg, err := c.Read(r.Context())
			if err != nil {
				return
			}
			var arr []json.RawMessage
			var label, id string
			if json.Unmarshal(msg, &arr) != nil || len(arr) < 2 || json.Unmarshal(arr[0], &label) != nil {
				continue
			}
			var out string
			switch label {
			case "EVENT":
				var ev struct{ ID string }
				_ = json.Unmarshal(arr[1], &ev)
				out = `["OK","` + ev.ID + `",true,""]`
			case "COUNT":
				_ = json.Unmarshal(arr[1], &id)
				if strings.Contains(string(msg), `"kinds":"one"`) {
					out = malformed(id)
				} else {
					out = `["COUNT","` + id + `",` + answer(len(arr)-2) + `]`
				}
			}
			if out != "" && c.Write(r.Context(), websocket.MessageText, []byte(out)) != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// The NIP-45 checks against relays that answer COUNT wrong: a bare number
// fails count-form, a union counted twice fails count-union (named when
// marked approximate), a malformed COUNT refused with a NOTICE fails
// refused-closed, with CLOSED without a prefix is named, with
// CLOSED "invalid: …" passes.
func TestNIP45Checks(t *testing.T) {
	t.Parallel() // the NOTICE case waits a Timeout
	info := &nip11.Info{SupportedNIPs: []any{45.0}}
	sum := func(bare bool, approx string) func(int) string {
		return func(n int) string {
			c := map[int]string{1: "3", 2: "5"}[n]
			if bare {
				return c
			}
			return `{"count":` + c + approx + `}`
		}
	}
	notice := func(string) string { return `["NOTICE","COUNT processing failed"]` }
	closed := func(reason string) func(string) string {
		return func(id string) string { return `["CLOSED","` + id + `","` + reason + `"]` }
	}
	for _, tc := range []struct {
		name                string
		answer              func(int) string
		malformed           func(string) string
		form, union, refuse results.CheckStatus
	}{
		{"bare numbers, summed; NOTICE", sum(true, ""), notice, results.CheckFail, results.CheckFail, results.CheckFail},
		{"summed, approximate; CLOSED without prefix", sum(false, `,"approximate":true`), closed("bad filter"), results.CheckPass, results.CheckNamed, results.CheckNamed},
		{"summed; CLOSED invalid:", sum(false, ""), closed("invalid: bad filter"), results.CheckPass, results.CheckFail, results.CheckPass},
	} {
		got := runAll(t, countRelay(t, tc.answer, tc.malformed), info, "nip45.count-form", "nip45.count-union", "nip45.refused-closed")
		for id, w := range map[string]results.CheckStatus{"nip45.count-form": tc.form, "nip45.count-union": tc.union, "nip45.refused-closed": tc.refuse} {
			if c := got[id]; c.Status != w {
				t.Errorf("%s: %s: %s, want %s", tc.name, id, describe(c), w)
			}
		}
	}
}

// The test relay ignores search and does not speak NIP-77; told it
// announces them: a search returns the event without the word (named,
// NIP-50 matching is a SHOULD) while authors still hold (pass); a
// NEG-OPEN is never answered (fail, the REQ after it was) and no
// reconciliation ends (unknown).
func TestNIP50AndNIP77OnRelayWithout(t *testing.T) {
	t.Parallel() // the NIP-77 cases wait out a Timeout each, idle, beside TestSharedRelays
	r := testrelay.New(testrelay.Config{Verify: true})
	t.Cleanup(r.Close) // after the parallel subtests
	info := &nip11.Info{SupportedNIPs: []any{50.0, 77.0}}
	want := map[string]results.CheckStatus{
		"nip50.search-content":        results.CheckNamed,
		"nip50.extension-ignored":     results.CheckNamed,
		"nip50.search-and-conditions": results.CheckPass,
		"nip77.neg-open-answered":     results.CheckFail,
		"nip77.reconcile":             results.CheckUnknown,
	}
	for id, w := range want {
		t.Run(id, func(t *testing.T) {
			t.Parallel() // the NIP-77 ones wait a Timeout each
			c := runAll(t, r.URL(), info, id)[id]
			if c.Status != w {
				t.Errorf("%s: %s, want %s", id, describe(c), w)
			}
			if id == "nip50.extension-ignored" && !strings.Contains(c.Detail, "the word alone returned it too") {
				t.Errorf("%s: %q does not say the search ignores the word as well", id, c.Detail)
			}
		})
	}
}
