package nostr

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	gonostr "github.com/nbd-wtf/go-nostr"
)

// The tests compare this package with go-nostr, an independent
// implementation, on events chosen to break serializers.

const pk = "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"

// tricky strings: every control character, quotes, backslashes, DEL,
// HTML-special characters (never escaped by NIP-01), 2/3/4-byte UTF-8, RTL,
// line/paragraph separators, a literal replacement character.
var tricky = func() []string {
	var ctl strings.Builder
	for c := range 0x20 {
		ctl.WriteByte(byte(c))
	}
	return []string{
		"",
		"hello",
		ctl.String(),
		`say "hi" \ back\\slash \"quoted\"`,
		"del\x7f<tag>&amp;'single'/slash",
		"emoji 🤙🔥👨‍💻🇯🇵 é ñ ü 日本語 한국어",
		"مرحبا بالعالم שלום עולם",
		"line\u2028para\u2029sep \ufffd replacement",
		"tab\there\r\nnewline\fform\bback",
		strings.Repeat("long 🚀 \"x\"\n", 500),
	}
}()

func toGo(e *Event) gonostr.Event {
	g := gonostr.Event{ID: e.ID, PubKey: e.PubKey, CreatedAt: gonostr.Timestamp(e.CreatedAt), Kind: e.Kind,
		Content: e.Content, Sig: e.Sig}
	for _, t := range e.Tags {
		g.Tags = append(g.Tags, gonostr.Tag(t))
	}
	return g
}

func variedEvents() []*Event {
	var evs []*Event
	for i, s := range tricky {
		e := &Event{PubKey: pk, CreatedAt: 1700000000 + int64(i), Kind: []int{1, 0, 3, 7, 30023}[i%5], Content: s,
			Tags: []Tag{{"t", s}, {"e", strings.Repeat("ab", 32), "", "root"}, {"p", pk}, {""}, {"x", "", s}}}
		if i%3 == 0 {
			e.Tags = nil
		}
		evs = append(evs, e)
	}
	evs = append(evs, &Event{PubKey: pk, CreatedAt: 0, Kind: 0, Tags: []Tag{}})
	return evs
}

func TestComputeIDMatchesGoNostr(t *testing.T) {
	for i, e := range variedEvents() {
		g := toGo(e)
		if got, want := string(e.AppendSerialized(nil)), string(g.Serialize()); got != want {
			t.Fatalf("event %d: serialization differs\nours  %q\ntheirs %q", i, got, want)
		}
		id := e.ComputeID()
		e.ID = g.GetID()
		if !e.CheckID() || string(hexOf(id[:])) != e.ID {
			t.Fatalf("event %d: ComputeID differs from go-nostr", i)
		}
		e.ID = strings.Repeat("0", 64)
		if e.CheckID() {
			t.Fatalf("event %d: CheckID accepts a wrong id", i)
		}
	}
}

func hexOf(b []byte) []byte {
	const hx = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, hx[c>>4], hx[c&15])
	}
	return out
}

func TestAppendJSONParsesInGoNostr(t *testing.T) {
	for i, e := range variedEvents() {
		id := e.ComputeID()
		e.ID = string(hexOf(id[:]))
		e.Sig = strings.Repeat("cd", 64)
		raw := e.AppendJSON(nil)
		if !json.Valid(raw) {
			t.Fatalf("event %d: invalid JSON %s", i, raw)
		}
		var g gonostr.Event
		if err := g.UnmarshalJSON(raw); err != nil {
			t.Fatalf("event %d: go-nostr cannot parse %s: %v", i, raw, err)
		}
		if !reflect.DeepEqual(g, toGo(e)) && !(len(e.Tags) == 0 && len(g.Tags) == 0) {
			t.Fatalf("event %d: go-nostr parsed something else:\n%#v\n%#v", i, g, toGo(e))
		}
		if !g.CheckID() {
			t.Fatalf("event %d: go-nostr computes another id from our JSON", i)
		}
		// ParseEvent reads it back too.
		back, err := ParseEvent(raw)
		if err != nil || back.Content != e.Content || len(back.Tags) != len(e.Tags) {
			t.Fatalf("event %d: ParseEvent: %v", i, err)
		}
		// No whitespace outside strings: compacting changes nothing.
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil || !bytes.Equal(compact.Bytes(), raw) {
			t.Fatalf("event %d: whitespace outside strings in %s (%v)", i, raw, err)
		}
	}
}

// replaced is s with each invalid UTF-8 byte replaced by U+FFFD.
func replaced(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\ufffd")
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func TestAppendJSONStringInvalidUTF8(t *testing.T) {
	cases := append([]string{"\xff", "a\xc3", "\xc3(", "\xe2\x82", "ok\xf0\x9f\x98 end", "\xed\xa0\x80 surrogate", "\xc0\xaf overlong"}, tricky...)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		out := AppendJSONString(nil, s)
		if !utf8.Valid(out) || !json.Valid(out) {
			t.Fatalf("%q: output %q is not valid UTF-8 JSON", s, out)
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatal(err)
		}
		if back != replaced(s) {
			t.Fatalf("%q: decodes to %q, want %q", s, back, replaced(s))
		}
		if utf8.ValidString(s) {
			if want := string(gonostrEscape(s)); string(out) != want {
				t.Fatalf("%q: ours %q, go-nostr %q", s, out, want)
			}
		}
		// A relay that parses our wire JSON computes the id we signed,
		// even when the content we were given was not valid UTF-8.
		e := &Event{PubKey: pk, CreatedAt: 1, Kind: 1, Content: s, Tags: []Tag{{"t", s}}}
		id := e.ComputeID()
		e.ID, e.Sig = string(hexOf(id[:])), strings.Repeat("00", 64)
		var g gonostr.Event
		if err := g.UnmarshalJSON(e.AppendJSON(nil)); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if g.GetID() != e.ID {
			t.Fatalf("%q: go-nostr computes another id from our JSON", s)
		}
	}
}

// gonostrEscape is go-nostr's string escaping, taken from its serialization
// of a one-tag event.
func gonostrEscape(s string) []byte {
	e := gonostr.Event{PubKey: pk, Tags: gonostr.Tags{{s}}}
	ser := string(e.Serialize())
	start := strings.Index(ser, "[[") + 2
	end := strings.LastIndex(ser, "]],")
	return []byte(ser[start:end])
}

func TestFilterMatchesGoNostr(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pubs := []string{pk, strings.Repeat("11", 32), strings.Repeat("22", 32)}
	ids := []string{strings.Repeat("aa", 32), strings.Repeat("bb", 32), strings.Repeat("cc", 32)}
	vals := []string{"nostr", "bitcoin", "日本", pk}
	pick := func(from []string) []string {
		var out []string
		for _, v := range from {
			if rng.IntN(2) == 0 {
				out = append(out, v)
			}
		}
		if len(out) == 0 {
			out = append(out, from[rng.IntN(len(from))])
		}
		return out
	}
	var events []*Event
	for range 300 {
		e := &Event{ID: ids[rng.IntN(3)], PubKey: pubs[rng.IntN(3)], CreatedAt: int64(100 + rng.IntN(20)), Kind: rng.IntN(4)}
		for range rng.IntN(4) {
			e.Tags = append(e.Tags, Tag{[]string{"t", "p", "e"}[rng.IntN(3)], vals[rng.IntN(len(vals))]})
		}
		if rng.IntN(10) == 0 {
			e.Tags = append(e.Tags, Tag{"t"}) // a tag without a value
		}
		events = append(events, e)
	}
	matched := 0
	for range 2000 {
		var f Filter
		if rng.IntN(4) == 0 {
			f.IDs = pick(ids)
		}
		if rng.IntN(3) == 0 {
			f.Authors = pick(pubs)
		}
		if rng.IntN(3) == 0 {
			f.Kinds = []int{rng.IntN(4), rng.IntN(4)}
		}
		if rng.IntN(3) == 0 {
			f.Since = Int64(int64(100 + rng.IntN(20)))
		}
		if rng.IntN(3) == 0 {
			f.Until = Int64(int64(100 + rng.IntN(20)))
		}
		if rng.IntN(2) == 0 {
			f.Tags = map[string][]string{[]string{"t", "p", "e"}[rng.IntN(3)]: pick(vals)}
		}
		// Round trip through JSON into both implementations.
		raw := f.AppendJSON(nil)
		var ours Filter
		var theirs gonostr.Filter
		if err := json.Unmarshal(raw, &ours); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if err := theirs.UnmarshalJSON(raw); err != nil {
			t.Fatalf("go-nostr cannot parse our filter %s: %v", raw, err)
		}
		if !reflect.DeepEqual(ours, f) {
			t.Fatalf("filter JSON round trip changed %s", raw)
		}
		for _, e := range events {
			g := toGo(e)
			if got, want := f.Matches(e), theirs.Matches(&g); got != want {
				t.Fatalf("filter %s on %s: ours %v, go-nostr %v", raw, e.AppendJSON(nil), got, want)
			} else if got {
				matched++
			}
		}
	}
	if matched == 0 {
		t.Fatal("no filter matched anything: the comparison is vacuous")
	}
}
