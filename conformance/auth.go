package conformance

// NIP-42 AUTH on a check's connections.
//
// With Options.Auth a probe answers the relay's challenge when the relay
// refuses an EVENT (OK false "auth-required: …") or a REQ (CLOSED
// "auth-required: …") of the check, or at once with Options.AuthAlways:
// it sends ["AUTH",<kind-22242 event>], waits for its OK and, when the
// relay accepts it, sends each refused message again, once. The refusal
// is then not shown to the check: the answer to the second send is the
// message's answer. When the relay refuses the AUTH (or it cannot be
// signed), the refusals are passed on to the check as they came, and the
// check is not run as without Auth. A refusal that comes before the
// challenge waits for it. All of it runs on the goroutine that reads the
// probe's frames (probe.next): a check's waits bound it.

import (
	"context"
	"encoding/json"
	"strings"
)

// AuthFunc signs a NIP-42 AUTH event: it returns the JSON of a kind-22242
// event with the tags ["relay",relay] and ["challenge",challenge], and the
// event's id.
type AuthFunc func(challenge, relay string) (event []byte, id string, err error)

// authPhase is where a connection's AUTH stands.
type authPhase uint8

const (
	authNone     authPhase = iota // not sent
	authSent                      // sent, its OK not read yet
	authAccepted                  // OK true
	authRefused                   // OK false, or not signed: refusals stay
)

// authState is a probe's NIP-42 state (nil without Options.Auth).
type authState struct {
	sign      AuthFunc
	eager     bool
	url       string
	challenge string
	phase     authPhase
	id        string             // the AUTH event's id
	ops       map[string]*authOp // messages the check sent, by opKey
	held      []heldRefusal      // refusals waiting for the AUTH's OK
}

// authOp is a message the check sent that the relay may refuse.
type authOp struct {
	msg     []byte
	retried bool
}

type heldRefusal struct {
	op *authOp
	f  frame
}

// opsKept bounds the messages kept for a second send.
const opsKept = 4096

// opKey names a message the relay answers: "REQ <sub>" (a REQ or a COUNT,
// NIP-45: one namespace of ids) or "EVENT <id>" ("" for other messages).
func opKey(msg []byte) (key string, closes bool) {
	var arr []json.RawMessage
	var label, first string
	if json.Unmarshal(msg, &arr) != nil || len(arr) < 2 || json.Unmarshal(arr[0], &label) != nil {
		return "", false
	}
	switch label {
	case "REQ", "CLOSE", "COUNT":
		if json.Unmarshal(arr[1], &first) != nil {
			return "", false
		}
		return "REQ " + first, label == "CLOSE"
	case "EVENT":
		var ev struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(arr[1], &ev) != nil {
			return "", false
		}
		return "EVENT " + ev.ID, false
	}
	return "", false
}

// sent records a message the check sends.
func (a *authState) sent(msg []byte) {
	key, closes := opKey(msg)
	switch {
	case key == "":
	case closes:
		delete(a.ops, key)
	case len(a.ops) < opsKept || a.ops[key] != nil:
		a.ops[key] = &authOp{msg: msg}
	}
}

// handle looks at a frame before the check does; true: the frame is the
// probe's own (a challenge, the AUTH's OK, a refusal held for a retry).
func (p *probe) handleAuth(ctx context.Context, f frame) bool {
	a := p.auth
	switch {
	case f.label == "AUTH":
		if a.challenge == "" {
			a.challenge = f.str(0)
		}
		if a.eager || len(a.held) > 0 {
			p.startAuth(ctx)
		}
		return true
	case f.label == "OK" && a.phase == authSent && f.str(0) == a.id:
		if len(f.parts) > 1 && string(f.parts[1]) == "true" {
			a.phase = authAccepted
			p.resend(ctx)
		} else {
			p.authFailed()
		}
		return true
	}
	var key string
	switch {
	case f.label == "OK" && len(f.parts) > 2 && string(f.parts[1]) == "false" && authRequired(f.str(2)):
		key = "EVENT " + f.str(0)
	case f.label == "CLOSED" && authRequired(f.str(1)):
		key = "REQ " + f.str(0)
	default:
		return false
	}
	op := a.ops[key]
	if op == nil || op.retried || a.phase == authRefused {
		return false
	}
	a.held = append(a.held, heldRefusal{op, f})
	switch a.phase {
	case authAccepted: // refused before the relay read the AUTH
		p.resend(ctx)
	case authNone:
		p.startAuth(ctx)
	}
	return true
}

func authRequired(reason string) bool { return strings.HasPrefix(reason, "auth-required:") }

// startAuth answers the challenge (once; none yet: when it comes).
func (p *probe) startAuth(ctx context.Context) {
	a := p.auth
	if a.phase != authNone || a.challenge == "" {
		return
	}
	ev, id, err := a.sign(a.challenge, a.url)
	if err != nil {
		p.log.note("cannot sign the NIP-42 AUTH: " + err.Error())
		p.authFailed()
		return
	}
	a.phase, a.id = authSent, id
	msg := append(append([]byte(`["AUTH",`), ev...), ']')
	if err := p.write(ctx, msg); err != nil {
		p.authFailed()
	}
}

// resend sends the held messages again, each once.
func (p *probe) resend(ctx context.Context) {
	held := p.auth.held
	p.auth.held = nil
	for _, h := range held {
		h.op.retried = true
		p.log.note("authenticated: the refused message again")
		if err := p.write(ctx, h.op.msg); err != nil {
			h.f.size = 0
			p.back = append(p.back, h.f) // the refusal stands
		}
	}
}

// authFailed passes the held refusals on to the check.
func (p *probe) authFailed() {
	p.auth.phase = authRefused
	for _, h := range p.auth.held {
		h.f.size = 0 // already taken off the queue's count
		p.back = append(p.back, h.f)
	}
	p.auth.held = nil
}
