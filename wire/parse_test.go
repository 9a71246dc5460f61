package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestParseFrame(t *testing.T) {
	id := "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
	cases := []struct {
		in     string
		kind   frameKind
		a, b   string
		ok     bool
		obj    string
		hasErr bool
	}{
		{in: `["OK","` + id + `",true,""]`, kind: kindOK, a: id, ok: true},
		{in: ` [ "OK" , "` + id + `" , false , "blocked: no" ] `, kind: kindOK, a: id, b: "blocked: no"},
		{in: `["OK","` + id + `",true]`, kind: kindOK, a: id, ok: true},
		{in: `["OK","x",true,"a\"b\\c\/d\u00e9\ud83d\ude00\ud800"]`, kind: kindOK, a: "x", ok: true, b: "a\"b\\c/dé😀\ufffd"},
		{in: `["EVENT","s",{"content":"[\"EOSE\",\"s\"] }","tags":[["e","]"]]}]`, kind: kindEvent, a: "s",
			obj: `{"content":"[\"EOSE\",\"s\"] }","tags":[["e","]"]]}`},
		{in: `["EOSE","s\u0031"]`, kind: kindEOSE, a: "s1"},
		{in: `["CLOSED","s","error: x"]`, kind: kindClosed, a: "s", b: "error: x"},
		{in: `["CLOSED","s"]`, kind: kindClosed, a: "s"},
		{in: `["NOTICE","hi"]`, kind: kindNotice, a: "hi"},
		{in: `["AUTH","c"]`, kind: kindAuth, a: "c"},
		{in: `["COUNT","s",{"count":3}]`, kind: kindCount, a: "s", obj: `{"count":3}`},
		{in: `["\u004fK","x",true,""]`, kind: kindOK, a: "x", ok: true},
		{in: `["NEW",1,{"a":[null,true]},"x"]`, kind: kindUnknown},
		{in: `["OK","x",true,""]]`, hasErr: true},
		{in: `["OK","x",1,""]`, hasErr: true},
		{in: `["OK","x",true,"",""]`, hasErr: true},
		{in: `["EVENT","s",{"a":1}`, hasErr: true},
		{in: `["EVENT","s",{"a":1]]`, hasErr: true},
		{in: `["EVENT","s",[1]]`, hasErr: true},
		{in: `["EOSE"]`, hasErr: true},
		{in: `["EOSE",5]`, hasErr: true},
		{in: `["NOTICE","a` + "\n" + `"]`, hasErr: true},
		{in: `["NOTICE","\q"]`, hasErr: true},
		{in: `["NOTICE","\u12"]`, hasErr: true},
		{in: `"OK"`, hasErr: true},
		{in: `[]`, hasErr: true},
		{in: ``, hasErr: true},
	}
	for _, tc := range cases {
		f, ok := parseCase(t, tc.in, tc.hasErr)
		if !ok {
			continue
		}
		if f.kind != tc.kind || (tc.kind != kindUnknown && (f.a.String() != tc.a || f.b.String() != tc.b || f.ok != tc.ok || string(f.obj) != tc.obj)) {
			t.Errorf("%s: got kind %d a=%q b=%q ok=%v obj=%s", tc.in, f.kind, f.a.String(), f.b.String(), f.ok, f.obj)
		}
	}
}

// parseCase parses in, failing t when it errs but should not or the
// reverse; ok is whether it parsed as a frame whose fields are to be
// checked.
func parseCase(t *testing.T, in string, hasErr bool) (f frame, ok bool) {
	t.Helper()
	err := parseFrame([]byte(in), &f)
	switch {
	case hasErr && err == nil:
		t.Errorf("%s: parsed, want an error", in)
	case !hasErr && err != nil:
		t.Errorf("%s: %v", in, err)
	}
	return f, err == nil && !hasErr
}

func TestParseOKDoesNotAllocate(t *testing.T) {
	in := []byte(`["OK","abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789",true,""]`)
	eose := []byte(`["EOSE","sub-1"]`)
	var f frame
	if n := testing.AllocsPerRun(100, func() {
		parseFrame(in, &f)
		parseFrame(eose, &f)
	}); n != 0 {
		t.Fatalf("parseFrame allocates %v times for OK+EOSE", n)
	}
}

// FuzzParseFrame checks that the parser never panics and that, for every
// frame encoding/json accepts, it agrees with encoding/json on the labels it
// knows.
func FuzzParseFrame(f *testing.F) {
	for _, s := range []string{
		`["OK","abc",true,""]`, `["OK","a\u00e9",false,"blocked: \"x\""]`, `["EVENT","s",{"id":"x","tags":[["a","b"]],"content":"]\"["}]`,
		`["EOSE","s"]`, `["CLOSED","s","r"]`, `["NOTICE","\ud83d\ude00"]`, `["AUTH","c"]`, `["COUNT","s",{"count":1}]`,
		`[`, `["OK"`, `["EVENT","s",{`, `["X",[[[[]]]]]`, `["NOTICE","\ud800\u0041"]`, "[\"NOTICE\",\"\xff\"]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var fr frame
		err := parseFrame(in, &fr)
		var arr []json.RawMessage
		if !json.Valid(in) || json.Unmarshal(in, &arr) != nil || len(arr) == 0 {
			return
		}
		var lbl string
		if json.Unmarshal(arr[0], &lbl) != nil {
			if err == nil {
				t.Fatalf("accepted a frame without a string label: %q", in)
			}
			return
		}
		str := func(i int) (string, bool) {
			var s string
			if i >= len(arr) || json.Unmarshal(arr[i], &s) != nil || !bytes.HasPrefix(bytes.TrimSpace(arr[i]), []byte(`"`)) {
				return "", false
			}
			return s, true
		}
		obj := func(i int) (string, bool) {
			if i >= len(arr) || !bytes.HasPrefix(bytes.TrimSpace(arr[i]), []byte(`{`)) {
				return "", false
			}
			return string(bytes.TrimSpace(arr[i])), true
		}
		switch lbl {
		case "OK":
			id, ok1 := str(1)
			var b bool
			ok2 := len(arr) > 2 && json.Unmarshal(arr[2], &b) == nil && (string(arr[2]) == "true" || string(arr[2]) == "false")
			reason, ok3 := str(3)
			valid := ok1 && ok2 && (len(arr) == 3 || (len(arr) == 4 && ok3))
			if valid != (err == nil) {
				t.Fatalf("OK %q: parser err=%v, encoding/json valid=%v", in, err, valid)
			}
			if valid && (fr.a.String() != id || fr.ok != b || fr.b.String() != reason) {
				t.Fatalf("OK %q: got %q %v %q want %q %v %q", in, fr.a.String(), fr.ok, fr.b.String(), id, b, reason)
			}
		case "EVENT", "COUNT":
			sub, ok1 := str(1)
			o, ok2 := obj(2)
			valid := ok1 && ok2 && len(arr) == 3
			if valid != (err == nil) {
				t.Fatalf("%s %q: parser err=%v, encoding/json valid=%v", lbl, in, err, valid)
			}
			if valid && (fr.a.String() != sub || string(fr.obj) != o) {
				t.Fatalf("%s %q: got %q %s", lbl, in, fr.a.String(), fr.obj)
			}
		case "EOSE", "NOTICE", "AUTH":
			s, ok1 := str(1)
			valid := ok1 && len(arr) == 2
			if valid != (err == nil) {
				t.Fatalf("%s %q: parser err=%v, encoding/json valid=%v", lbl, in, err, valid)
			}
			if valid && fr.a.String() != s {
				t.Fatalf("%s %q: got %q want %q", lbl, in, fr.a.String(), s)
			}
		case "CLOSED":
			s, ok1 := str(1)
			reason, ok2 := str(2)
			valid := ok1 && (len(arr) == 2 || (len(arr) == 3 && ok2))
			if valid != (err == nil) {
				t.Fatalf("CLOSED %q: parser err=%v, encoding/json valid=%v", in, err, valid)
			}
			if valid && (fr.a.String() != s || fr.b.String() != reason) {
				t.Fatalf("CLOSED %q: got %q %q", in, fr.a.String(), fr.b.String())
			}
		default:
			if err != nil {
				t.Fatalf("unknown label %q rejected though valid JSON: %v", in, err)
			}
		}
	})
}

// TestParseKnownEvent: an EVENT whose object the KnownEvent hook
// recognises is taken without a scan, tagged, and what follows it is still
// checked; an object the hook does not recognise (or a hook answering past
// the message's end) is scanned as before.
func TestParseKnownEvent(t *testing.T) {
	obj := `{"id":"x","content":"]\"[","tags":[]}`
	known := func(p []byte) (int, int32) {
		if strings.HasPrefix(string(p), obj) {
			return len(obj), 7
		}
		if strings.HasPrefix(string(p), `{"liar"`) {
			return len(p) + 1, 9 // past the end: ignored
		}
		return 0, 0
	}
	for _, tc := range []struct {
		in          string
		err         bool
		known       bool
		obj         string
		description string
	}{
		{`["EVENT","s",` + obj + `]`, false, true, obj, "recognised"},
		{`[ "EVENT" , "s" ,  ` + obj + ` ] `, false, true, obj, "recognised, with spaces"},
		{`["EVENT","s",` + obj + `,1]`, true, false, "", "recognised, then a fourth element"},
		{`["EVENT","s",` + obj + ``, true, false, "", "recognised, unterminated"},
		{`["EVENT","s",{"id":"y"}]`, false, false, `{"id":"y"}`, "not recognised: scanned"},
		{`["EVENT","s",{"liar":1}]`, false, false, `{"liar":1}`, "a length past the end: scanned"},
		{`["EVENT","s",{"id":"y"]`, true, false, "", "not recognised, invalid"},
		{`["EVENT","s"` + obj + `]`, true, false, "", "no comma"},
	} {
		var f frame
		err := parseFrameKnown([]byte(tc.in), &f, known)
		if (err != nil) != tc.err {
			t.Errorf("%s: error %v, want error %v", tc.description, err, tc.err)
			continue
		}
		if err != nil {
			continue
		}
		if f.kind != kindEvent || f.known != tc.known || string(f.obj) != tc.obj || (tc.known && f.tag != 7) {
			t.Errorf("%s: kind %d known %v tag %d obj %q, want known %v obj %q", tc.description, f.kind, f.known, f.tag, f.obj, tc.known, tc.obj)
		}
	}
}
