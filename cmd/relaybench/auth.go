package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/wire"
)

// authFlags say how every connection of a command answers NIP-42 AUTH (see
// wire/auth.go). They are read once, before the command runs (activate);
// the corpus keys join the key ring when the corpus is loaded.
type authFlags struct {
	Auth           string `name:"auth" default:"on-demand" enum:"on-demand,always,off" help:"NIP-42 AUTH. on-demand: answer the relay's challenge only when it refuses an EVENT or REQ with 'auth-required:', then send that EVENT or REQ again (it keeps one outcome; AUTH round trips are counted and timed apart: auth_sent, auth_ok, auth_refused, auth_retried, latency 'auth'). always: answer every challenge at connect. off: never authenticate (auth-required refusals stay refusals)."`
	AuthKey        string `name:"auth-key" env:"RELAYBENCH_AUTH_KEY" placeholder:"HEX|NSEC" help:"Authenticate every connection with this one secret key (64 hex digits or nsec1…; or $RELAYBENCH_AUTH_KEY, kept out of the process list). Default: the key of the author of the refused event (the corpus keys: 'relaybench corpus --pubkeys' lists them, to whitelist), and the first corpus key for a REQ or 'always'."`
	answerCapFlags        // the cap on one answer, for the same connections (answercap.go)
}

// nip42 returns the command's AUTH flags (promoted to every command that
// embeds them; see Globals.AfterApply).
func (f *authFlags) nip42() *authFlags { return f }

func (f authFlags) validate() error {
	if err := f.answerCapFlags.validate(); err != nil {
		return err
	}
	if f.AuthKey == "" {
		return nil
	}
	_, err := parseAuthKey(f.AuthKey)
	return err
}

// parseAuthKey reads --auth-key: 64 hex digits or an nsec.
func parseAuthKey(s string) ([32]byte, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(strings.ToLower(s), "nsec1") {
		b, err := decodeNsec(s)
		if err != nil {
			return [32]byte{}, fmt.Errorf("--auth-key: not a valid nsec: %v", err)
		}
		s = hex.EncodeToString(b)
	}
	sk, err := wire.ParseSecretKey(s)
	if err != nil {
		return sk, fmt.Errorf("--auth-key: %v", err)
	}
	return sk, nil
}

// The key ring of the command being run (nil when it does not dial).
var (
	authMu   sync.Mutex
	authRing *wire.AuthKeys
)

// activate makes these flags the process default of every connection.
func (f authFlags) activate() error {
	mode, err := wire.ParseAuthMode(f.Auth)
	if err != nil {
		return err
	}
	ring := wire.NewAuthKeys(nil)
	if f.AuthKey != "" {
		sk, err := parseAuthKey(f.AuthKey)
		if err != nil {
			return err
		}
		if _, err := ring.SetFixed(sk); err != nil {
			return fmt.Errorf("--auth-key: %v", err)
		}
	}
	authMu.Lock()
	authRing = ring
	authMu.Unlock()
	wire.SetDefaultAuth(&wire.Auth{Mode: mode, Keys: ring})
	f.answerCapFlags.activate()
	return nil
}

// deactivateAuth clears the process default (a command without AUTH flags).
func deactivateAuth() {
	authMu.Lock()
	authRing = nil
	authMu.Unlock()
	wire.SetDefaultAuth(nil)
	wire.SetDefaultAnswerCap(0, 0)
}

// addAuthKeys puts a loaded corpus's keys on the ring: they sign the AUTH of
// the events they authored (and, the first one, of REQs). A dump's events
// are by keys relaybench does not hold: its synthetic keys sign instead.
func addAuthKeys(c *corpus.Corpus) {
	authMu.Lock()
	ring := authRing
	authMu.Unlock()
	if ring == nil || c == nil {
		return
	}
	for i := range c.Authors {
		ring.Add(c.Authors[i].Secret) // a corpus key is valid: it signed
	}
}

// corpusPubkeys lists the public keys an operator whitelists for a corpus:
// the corpus keys (they sign the generated events, fresh events and AUTH),
// then, for a dump, the other authors of its events. Hex, in order, once.
func corpusPubkeys(c *corpus.Corpus) []string {
	seen := map[string]bool{}
	var out []string
	add := func(pk string) {
		if pk != "" && !seen[pk] {
			seen[pk] = true
			out = append(out, pk)
		}
	}
	for _, a := range c.Authors {
		add(a.PubKey)
	}
	if c.Manifest != nil {
		for _, e := range c.Events {
			add(e.PubKey)
		}
	}
	return out
}

// decodeNsec decodes a NIP-19 nsec (bech32, BIP-173) to its 32 bytes.
func decodeNsec(s string) ([]byte, error) {
	const charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
	if strings.ToLower(s) != s && strings.ToUpper(s) != s {
		return nil, errors.New("mixed case")
	}
	s = strings.ToLower(s)
	sep := strings.LastIndexByte(s, '1')
	if s[:sep] != "nsec" || len(s)-sep-1 < 6 {
		return nil, errors.New("not an nsec")
	}
	var data []byte
	for _, c := range s[sep+1:] {
		v := strings.IndexRune(charset, c)
		if v < 0 {
			return nil, fmt.Errorf("bad character %q", c)
		}
		data = append(data, byte(v))
	}
	// Checksum: polymod over the expanded prefix and the data must be 1.
	gen := [5]uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	step := func(v byte) {
		b := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i := range 5 {
			if (b>>i)&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	hrp := s[:sep]
	for i := range len(hrp) {
		step(hrp[i] >> 5)
	}
	step(0)
	for i := range len(hrp) {
		step(hrp[i] & 31)
	}
	for _, v := range data {
		step(v)
	}
	if chk != 1 {
		return nil, errors.New("bad checksum")
	}
	// 5-bit groups to bytes, no padding allowed beyond 4 zero bits.
	var out []byte
	acc, bits := uint32(0), 0
	for _, v := range data[:len(data)-6] {
		acc = acc<<5 | uint32(v)
		bits += 5
		if bits >= 8 {
			bits -= 8
			out = append(out, byte(acc>>bits))
		}
	}
	if bits >= 5 || acc&(1<<bits-1) != 0 {
		return nil, errors.New("bad padding")
	}
	if len(out) != 32 {
		return nil, fmt.Errorf("%d bytes, want 32", len(out))
	}
	return out, nil
}
