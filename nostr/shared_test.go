package nostr

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// inside reports whether s's bytes lie inside b (shared, not copied).
func inside(s string, b []byte) bool {
	if len(s) == 0 || len(b) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(&b[0]))
	return p >= lo && p+uintptr(len(s)) <= lo+uintptr(len(b))
}

func sharedCases() []string {
	id := strings.Repeat("a", 64)
	pk := strings.Repeat("b", 64)
	sig := strings.Repeat("c", 128)
	mk := func(tags []Tag, content string) string {
		e := Event{ID: id, PubKey: pk, CreatedAt: 1700000000, Kind: 1, Tags: tags, Content: content, Sig: sig}
		return string(e.AppendJSON(nil))
	}
	return []string{
		mk(nil, "plain content"),
		mk([]Tag{}, ""),
		mk([]Tag{{"e", id, "", "root"}, {"p", pk}, {"t", "x"}}, "héllo wörld ✓"),
		mk([]Tag{{"emoji", "a\"b", "line\nbreak\\"}, {}, {"p", pk, "wss://r"}}, "quote \" and \\ and \n\t\u0001 control"),
		mk([]Tag{{"e", id}}, "with \u2028 and \U0001F600"),
		mk([]Tag{{"bad", "\xff\xfe"}}, "invalid \xff utf-8"), // AppendJSON repairs it
		// not the compact layout, or not valid: ParseEvent's result and errors
		`{"id":"` + id + `","pubkey":"` + pk + `","created_at":-5,"kind":0,"tags":null,"content":"x","sig":"` + sig + `"}`,
		`{"id":"` + id + `","pubkey":"` + pk + `","created_at":01,"kind":0,"tags":[],"content":"x","sig":"` + sig + `"}`,
		`{"id":"` + id + `","pubkey":"` + pk + `","created_at":1e3,"kind":0,"tags":[],"content":"x","sig":"` + sig + `"}`,
		`{"id":"` + id + `","pubkey":"` + pk + `","created_at":99999999999999999999,"kind":0,"tags":[],"content":"x","sig":"` + sig + `"}`,
		`{"id":"` + id + `","pubkey":"` + pk + `","created_at":123456789012345678,"kind":7,"tags":[],"content":"x","sig":"` + sig + `"}`,
		`{"id":"` + id + `","pubkey":"` + pk + `","created_at":1,"kind":1,"tags":[["a" ,"b"]],"content":"x","sig":"` + sig + `"}`,
		`{"id":"` + id + `","pubkey":"` + pk + `","created_at":1,"kind":1,"tags":[],"content":"raw` + "\x01" + `ctl","sig":"` + sig + `"}`,
		`{"id":"` + id + `","pubkey":"` + pk + `","created_at":1,"kind":1,"tags":[],"content":"raw` + "\xff" + `","sig":"` + sig + `"}`,
		`{"id":"` + id + `","pubkey":"` + pk + `","created_at":1,"kind":1,"tags":[["a","\u0041\ud83d\ude00"]],"content":"\u00e9","sig":"` + sig + `"}`,
		`{"id":"` + id + `","pubkey":"` + pk + `","created_at":1,"kind":1,"tags":[["a","\q"]],"content":"x","sig":"` + sig + `"}`,
		`{"id":"` + id + `","pubkey":"` + pk + `","created_at":1,"kind":1,"tags":[],"content":"x","sig":"` + sig + `"} `,
		`{"id":"` + id + `","pubkey":"` + pk + `","created_at":1,"kind":1,"tags":[],"content":"x","sig":"` + sig + `"}x`,
		`{"id":"` + id + `","pubkey":"` + pk + `","created_at":1,"kind":1,"tags":[],"content":"x","sig":"` + sig[:127] + `"}`,
		`{"id":"` + id + `","pubkey":"` + pk + `","created_at":1,"kind":1,"tags":[["a"],`,
		`{"id":"` + id + `","pubkey":"` + pk + `","created_at":1,"kind":1,"tags":[["a"]],"content":"unterminated`,
		`{"pubkey":"` + pk + `","id":"` + id + `","created_at":1,"kind":1,"tags":[],"content":"x","sig":"` + sig + `"}`,
		`{"id":"` + id + `","pubkey":"` + pk + `","created_at":-,"kind":1,"tags":[],"content":"x","sig":"` + sig + `"}`,
		``,
		`{`,
	}
}

// ParseEventShared gives what ParseEvent gives, for every input; on the
// compact form, content and sig without escapes are shared with the input
// and the rest is not.
func TestParseEventSharedSameAsParseEvent(t *testing.T) {
	pk := strings.Repeat("b", 64)
	intern := map[string]string{pk: pk}
	for i, c := range sharedCases() {
		raw := []byte(c)
		want, werr := ParseEvent(raw)
		got, gerr := ParseEventShared(raw, intern, nil)
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Fatalf("case %d: error %v, want %v", i, gerr, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: %+v, want %+v", i, got, want)
		}
		if werr != nil || string(want.AppendJSON(nil)) != c {
			continue // not the compact form: ParseEvent's result is enough
		}
		if _, ok := parseCompact(raw, intern, nil); !ok {
			t.Fatalf("case %d: compact form not parsed in place", i)
		}
		if inside(got.ID, raw) || inside(got.PubKey, raw) {
			t.Fatalf("case %d: id or pubkey shares the input", i)
		}
		for _, tg := range got.Tags {
			for _, v := range tg {
				if inside(v, raw) {
					t.Fatalf("case %d: tag value %q shares the input", i, v)
				}
			}
		}
		if got.PubKey == pk && unsafe.StringData(got.PubKey) != unsafe.StringData(pk) {
			t.Fatalf("case %d: pubkey not interned", i)
		}
		if !inside(got.Sig, raw) {
			t.Fatalf("case %d: sig copied", i)
		}
		if esc := strings.Contains(c, `"content":"`+got.Content+`"`); esc != inside(got.Content, raw) && got.Content != "" {
			t.Fatalf("case %d: content shared %v, escape-free %v", i, inside(got.Content, raw), esc)
		}
	}
}

func BenchmarkParseEventShared(b *testing.B) {
	id := strings.Repeat("a", 64)
	e := Event{ID: id, PubKey: strings.Repeat("b", 64), CreatedAt: 1700000000, Kind: 1,
		Tags: []Tag{{"e", id, "", "root"}, {"p", id}}, Content: strings.Repeat("lorem ipsum ", 85), Sig: strings.Repeat("c", 128)}
	raw := e.AppendJSON(nil)
	b.Run("shared", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = ParseEventShared(raw, nil, nil)
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = ParseEvent(raw)
		}
	})
}

// unescape decodes what json decodes, or declines.
func TestUnescapeSameAsJSON(t *testing.T) {
	pieces := []string{"a", "é", "✓", "\U0001F600", `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u0001`, `\u00e9`,
		`\u00E9`, `\u2028`, `\ud83d\ude00`, `\ud83d`, `\x`, "\xff", "\x01", `\u12`, `\u12g4`, " ", "\\"}
	for i := range 20000 {
		var b strings.Builder
		for k, n := i, 0; n < 6; k, n = k/len(pieces), n+1 {
			b.WriteString(pieces[(k+n*7)%len(pieces)])
		}
		body := b.String()
		var want string
		werr := json.Unmarshal([]byte(`"`+body+`"`), &want)
		got, ok := unescape(nil, []byte(body))
		if ok && (werr != nil || string(got) != want) {
			t.Fatalf("%q: unescape %q, json %q (%v)", body, got, want, werr)
		}
		d, ok := decodeContent([]byte(body), []byte(`"`+body+`"`), nil)
		if ok != (werr == nil) || (ok && d != want) {
			t.Fatalf("%q: decodeContent %q %v, json %q (%v)", body, d, ok, want, werr)
		}
	}
}
