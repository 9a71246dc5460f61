// Package secp signs and verifies BIP-340 Schnorr signatures over secp256k1,
// the signatures Nostr events carry.
//
// Two backends implement Signer: libsecp256k1, loaded at run time with
// dlopen (so the binary builds and runs whether or not the library is
// installed; about 3× faster), and btcec, pure Go. Both produce the exact
// BIP-340 signature for a given key, message and aux randomness, so their
// output is byte-identical and interchangeable.
//
// Default picks libsecp256k1 when it loads, else btcec. The environment
// variable RELAYBENCH_SIGNER=btcec|libsecp256k1 forces one.
package secp

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
)

// Backend names, as returned by Signer.Name and accepted by Select and
// RELAYBENCH_SIGNER.
const (
	NameBtcec        = "btcec"
	NameLibsecp256k1 = "libsecp256k1"
)

// EnvVar is the environment variable that forces a backend.
const EnvVar = "RELAYBENCH_SIGNER"

// Signer makes BIP-340 signatures. Implementations are safe for concurrent
// use. aux is the BIP-340 auxiliary randomness; nil means 32 zero bytes.
type Signer interface {
	// Name is the backend name: "libsecp256k1" or "btcec".
	Name() string
	// PubKey returns the x-only public key of secret key sk.
	PubKey(sk *[32]byte) ([32]byte, error)
	// Sign signs the 32-byte message msg (a Nostr event id) with sk.
	Sign(sk *[32]byte, msg *[32]byte, aux *[32]byte) ([64]byte, error)
	// NewKey precomputes what signing with sk needs (the key pair); do it
	// once per author, then sign each event with SignKey.
	NewKey(sk [32]byte) (*Key, error)
	// SignKey signs msg with a key made by this signer's NewKey.
	SignKey(k *Key, msg *[32]byte, aux *[32]byte) ([64]byte, error)
}

// Key is a secret key prepared for fast signing by one backend. It is
// immutable and safe for concurrent use.
type Key struct {
	// Pub is the x-only public key.
	Pub [32]byte

	backend string
	kp      [96]byte          // libsecp256k1 secp256k1_keypair
	priv    *btcec.PrivateKey // btcec
}

// Backend is the name of the signer that made the key.
func (k *Key) Backend() string { return k.backend }

var zeroAux [32]byte

func auxOrZero(aux *[32]byte) *[32]byte {
	if aux == nil {
		return &zeroAux
	}
	return aux
}

// Btcec returns the pure-Go backend (btcec/v2 schnorr with FastSign).
func Btcec() Signer { return btcecSigner{} }

type btcecSigner struct{}

func (btcecSigner) Name() string { return NameBtcec }

func (btcecSigner) PubKey(sk *[32]byte) ([32]byte, error) {
	k, err := btcecSigner{}.NewKey(*sk)
	if err != nil {
		return [32]byte{}, err
	}
	return k.Pub, nil
}

func (btcecSigner) NewKey(sk [32]byte) (*Key, error) {
	if err := checkSecret(&sk); err != nil {
		return nil, err
	}
	priv, _ := btcec.PrivKeyFromBytes(sk[:])
	k := &Key{backend: NameBtcec, priv: priv}
	copy(k.Pub[:], schnorr.SerializePubKey(priv.PubKey()))
	return k, nil
}

func (s btcecSigner) Sign(sk, msg, aux *[32]byte) ([64]byte, error) {
	k, err := s.NewKey(*sk)
	if err != nil {
		return [64]byte{}, err
	}
	return s.SignKey(k, msg, aux)
}

func (btcecSigner) SignKey(k *Key, msg, aux *[32]byte) ([64]byte, error) {
	var out [64]byte
	if k == nil || k.priv == nil {
		return out, fmt.Errorf("secp: btcec cannot sign with a key made by %q", keyBackend(k))
	}
	sig, err := schnorr.Sign(k.priv, msg[:], schnorr.FastSign(), schnorr.CustomNonce(*auxOrZero(aux)))
	if err != nil {
		return out, fmt.Errorf("secp: btcec sign: %w", err)
	}
	copy(out[:], sig.Serialize())
	return out, nil
}

func keyBackend(k *Key) string {
	if k == nil {
		return "nil"
	}
	return k.backend
}

// btcecVerify verifies with btcec.
func btcecVerify(pub, msg *[32]byte, sig *[64]byte) bool {
	pk, err := schnorr.ParsePubKey(pub[:])
	if err != nil {
		return false
	}
	s, err := schnorr.ParseSignature(sig[:])
	if err != nil {
		return false
	}
	return s.Verify(msg[:], pk)
}

// curve order n of secp256k1, big-endian.
var curveN = [32]byte{
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
	0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41,
}

// ErrInvalidSecret is returned for a secret key that is zero or not below
// the curve order.
var ErrInvalidSecret = errors.New("secp: secret key is zero or not below the curve order")

// ValidSecret reports whether sk is a usable secret key (0 < sk < n).
func ValidSecret(sk *[32]byte) bool { return checkSecret(sk) == nil }

func checkSecret(sk *[32]byte) error {
	zero := true
	for _, b := range sk {
		if b != 0 {
			zero = false
			break
		}
	}
	if zero {
		return ErrInvalidSecret
	}
	for i := range sk {
		if sk[i] < curveN[i] {
			return nil
		}
		if sk[i] > curveN[i] {
			return ErrInvalidSecret
		}
	}
	return ErrInvalidSecret // equal to n
}

// Libsecp256k1 returns the libsecp256k1 backend, loading the shared library
// on first use, or the reason it cannot be loaded.
func Libsecp256k1() (Signer, error) {
	libOnce.Do(func() { libSigner, libErr = loadLibsecp() })
	return libSigner, libErr
}

var (
	libOnce   sync.Once
	libSigner Signer
	libErr    error
)

// Select returns the backend called name: "btcec", "libsecp256k1", or ""
// for automatic (libsecp256k1 when it loads, else btcec).
func Select(name string) (Signer, error) {
	switch name {
	case "", "auto":
		if s, err := Libsecp256k1(); err == nil {
			return s, nil
		}
		return Btcec(), nil
	case NameBtcec:
		return Btcec(), nil
	case NameLibsecp256k1:
		s, err := Libsecp256k1()
		if err != nil {
			return nil, fmt.Errorf("secp: %s requested but %w", name, err)
		}
		return s, nil
	}
	return nil, fmt.Errorf("secp: unknown signer %q (want btcec or libsecp256k1)", name)
}

// FromEnv returns the backend RELAYBENCH_SIGNER asks for (automatic when
// unset), or an error if it names an unknown or unloadable backend.
func FromEnv() (Signer, error) { return Select(os.Getenv(EnvVar)) }

// Default returns the backend to use: the one RELAYBENCH_SIGNER forces, or
// libsecp256k1 when it loads, else btcec. If RELAYBENCH_SIGNER names a
// backend that is unknown or cannot be loaded, the returned Signer fails
// every call with that error (use FromEnv to see the error up front).
func Default() Signer {
	s, err := FromEnv()
	if err != nil {
		return failing{err}
	}
	return s
}

type failing struct{ err error }

func (f failing) Name() string                             { return "unavailable" }
func (f failing) PubKey(*[32]byte) ([32]byte, error)       { return [32]byte{}, f.err }
func (f failing) Sign(_, _, _ *[32]byte) ([64]byte, error) { return [64]byte{}, f.err }
func (f failing) NewKey([32]byte) (*Key, error)            { return nil, f.err }
func (f failing) SignKey(*Key, *[32]byte, *[32]byte) ([64]byte, error) {
	return [64]byte{}, f.err
}

// Verify reports whether sig is a valid BIP-340 signature of msg by the
// x-only public key pub. It uses libsecp256k1 when loaded, else btcec.
func Verify(pub *[32]byte, msg *[32]byte, sig *[64]byte) bool {
	if s, err := Libsecp256k1(); err == nil {
		if v, ok := s.(verifier); ok {
			return v.verify(pub, msg, sig)
		}
	}
	return btcecVerify(pub, msg, sig)
}

type verifier interface {
	verify(pub, msg *[32]byte, sig *[64]byte) bool
}

// VerifyBtcec verifies with the pure-Go backend regardless of what is
// loaded (for cross-checking).
func VerifyBtcec(pub *[32]byte, msg *[32]byte, sig *[64]byte) bool {
	return btcecVerify(pub, msg, sig)
}
