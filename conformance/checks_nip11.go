package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/relaybench/relaybench/nip11"
)

// NIP-11 sentences, quoted exactly.
const (
	sent11Doc  = "When a relay receives an HTTP(s) request with an `Accept` header of `application/nostr+json` to a URI supporting WebSocket upgrades, they SHOULD return a document with the following structure."
	sent11CORS = "Relays MUST accept CORS requests by sending `Access-Control-Allow-Origin`, `Access-Control-Allow-Headers`, and `Access-Control-Allow-Methods` headers."
)

// httpBodyCap is the most bytes of an HTTP answer a check reads.
const httpBodyCap = 1 << 20

// corsOrigin is the Origin the CORS check sends, a web client's.
const corsOrigin = "https://client.example"

// httpAnswer is what came back for one HTTP request.
type httpAnswer struct {
	status int
	header http.Header
	body   []byte
}

// httpDo sends one request to the relay's HTTP URL with headers, reads at
// most httpBodyCap bytes of the answer and keeps it as evidence.
func (t *checkRun) httpDo(method string, headers map[string]string) (httpAnswer, error) {
	u, err := nip11.HTTPURL(t.url)
	if err != nil {
		return httpAnswer{}, err
	}
	ctx, cancel := t.wait()
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return httpAnswer{}, err
	}
	line := method + " " + u
	for k, v := range headers {
		req.Header.Set(k, v)
		line += " " + k + ": " + v
	}
	t.log.add("> ", []byte(line))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil && t.ctx.Err() == nil {
			return httpAnswer{}, fmt.Errorf("%s: %w", method, errWait)
		}
		return httpAnswer{}, &dialError{err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, httpBodyCap))
	if err != nil {
		return httpAnswer{}, fmt.Errorf("%s: reading the answer: %w", method, err)
	}
	t.log.add("< ", []byte(fmt.Sprintf("HTTP %d %s", resp.StatusCode, corsHeaders(resp.Header))))
	t.log.add("< ", body)
	return httpAnswer{resp.StatusCode, resp.Header, body}, nil
}

// corsHeaders is the Content-Type and Access-Control-* headers of h, for
// the evidence.
func corsHeaders(h http.Header) string {
	var out []string
	for _, k := range []string{"Content-Type", "Access-Control-Allow-Origin", "Access-Control-Allow-Headers", "Access-Control-Allow-Methods"} {
		if v := h.Values(k); len(v) > 0 {
			out = append(out, k+": "+strings.Join(v, ", "))
		}
	}
	return strings.Join(out, "; ")
}

// nip11Document: GET with Accept: application/nostr+json answers 200 with
// a JSON object.
func nip11Document(t *checkRun) outcome {
	a, err := t.httpDo(http.MethodGet, map[string]string{"Accept": "application/nostr+json"})
	if err != nil {
		return undecided(err)
	}
	if a.status != http.StatusOK {
		return named("the NIP-11 request was answered HTTP %d", a.status)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(a.body, &doc); err != nil || doc == nil {
		return named("the NIP-11 answer is not a JSON object (%d bytes)", len(a.body))
	}
	if raw, ok := doc["supported_nips"]; ok {
		var nips []int
		if json.Unmarshal(raw, &nips) != nil {
			return named("supported_nips is not an array of integers (NIP-11: \"This field is an array of the integer identifiers of `NIP`s that are implemented in the relay.\")")
		}
	}
	return pass()
}

// nip11CORS: a GET with an Origin, and a CORS preflight (OPTIONS) for it:
// each of the three headers is sent on one of the two answers, and
// Access-Control-Allow-Origin allows the origin.
func nip11CORS(t *checkRun) outcome {
	get, err := t.httpDo(http.MethodGet, map[string]string{"Accept": "application/nostr+json", "Origin": corsOrigin})
	if err != nil {
		return undecided(err)
	}
	pre, err := t.httpDo(http.MethodOptions, map[string]string{"Origin": corsOrigin,
		"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "accept"})
	if err != nil {
		return undecided(err)
	}
	var missing []string
	for _, k := range []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Headers", "Access-Control-Allow-Methods"} {
		if get.header.Get(k) == "" && pre.header.Get(k) == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		why := ""
		if missing[0] != "Access-Control-Allow-Origin" {
			why = " (Access-Control-Allow-Origin alone lets a browser's GET read the document; the sentence names all three)"
		}
		return fail("neither the GET with Origin (HTTP %d) nor the CORS preflight OPTIONS (HTTP %d) carried %s%s", get.status, pre.status, strings.Join(missing, ", "), why)
	}
	if o := get.header.Get("Access-Control-Allow-Origin"); o != "" && o != "*" && o != corsOrigin {
		return fail("the GET with Origin %s was answered Access-Control-Allow-Origin %q: the request is not accepted", corsOrigin, o)
	}
	return pass()
}
