//go:build cgo

package secp

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

// The few libsecp256k1 (>= 0.2.0) functions relaybench needs, resolved with
// dlsym so that nothing links against the library at build time. The opaque
// structs are plain byte arrays: secp256k1_keypair is 96 bytes and
// secp256k1_xonly_pubkey 64 bytes, both with byte alignment.
typedef void *(*rb_context_create_fn)(unsigned int);
typedef int (*rb_keypair_create_fn)(const void *, unsigned char *, const unsigned char *);
typedef int (*rb_keypair_xonly_pub_fn)(const void *, unsigned char *, int *, const unsigned char *);
typedef int (*rb_xonly_serialize_fn)(const void *, unsigned char *, const unsigned char *);
typedef int (*rb_xonly_parse_fn)(const void *, unsigned char *, const unsigned char *);
typedef int (*rb_sign32_fn)(const void *, unsigned char *, const unsigned char *, const unsigned char *, const unsigned char *);
typedef int (*rb_verify_fn)(const void *, const unsigned char *, const unsigned char *, size_t, const unsigned char *);

static void *rb_ctx;
static rb_keypair_create_fn rb_keypair_create;
static rb_keypair_xonly_pub_fn rb_keypair_xonly_pub;
static rb_xonly_serialize_fn rb_xonly_serialize;
static rb_xonly_parse_fn rb_xonly_parse;
static rb_sign32_fn rb_sign32;
static rb_verify_fn rb_verify;

// rb_load opens the library called name and resolves every symbol. It
// returns NULL on success, else a description of what is missing. The
// globals change only on success. It is called under a Go lock, never
// concurrently.
static const char *rb_load(const char *name) {
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		return e ? e : "dlopen failed";
	}
	rb_context_create_fn create = (rb_context_create_fn)dlsym(h, "secp256k1_context_create");
	rb_keypair_create_fn kc = (rb_keypair_create_fn)dlsym(h, "secp256k1_keypair_create");
	rb_keypair_xonly_pub_fn kx = (rb_keypair_xonly_pub_fn)dlsym(h, "secp256k1_keypair_xonly_pub");
	rb_xonly_serialize_fn xs = (rb_xonly_serialize_fn)dlsym(h, "secp256k1_xonly_pubkey_serialize");
	rb_xonly_parse_fn xp = (rb_xonly_parse_fn)dlsym(h, "secp256k1_xonly_pubkey_parse");
	rb_sign32_fn sg = (rb_sign32_fn)dlsym(h, "secp256k1_schnorrsig_sign32");
	rb_verify_fn vf = (rb_verify_fn)dlsym(h, "secp256k1_schnorrsig_verify");
	if (!create || !kc || !kx || !xs || !xp || !vf) {
		dlclose(h);
		return "library lacks the extrakeys/schnorrsig modules";
	}
	if (!sg) {
		dlclose(h);
		return "library is older than 0.2.0 (no secp256k1_schnorrsig_sign32)";
	}
	// SECP256K1_CONTEXT_SIGN | SECP256K1_CONTEXT_VERIFY. The context is never
	// randomized after creation, so it is safe to share between threads.
	void *ctx = create(0x301);
	if (!ctx) {
		dlclose(h);
		return "secp256k1_context_create failed";
	}
	rb_ctx = ctx;
	rb_keypair_create = kc;
	rb_keypair_xonly_pub = kx;
	rb_xonly_serialize = xs;
	rb_xonly_parse = xp;
	rb_sign32 = sg;
	rb_verify = vf;
	return NULL;
}

static int rb_keypair(const unsigned char *sk32, unsigned char *kp96, unsigned char *pub32) {
	unsigned char xonly[64];
	if (!rb_keypair_create(rb_ctx, kp96, sk32)) return 0;
	if (!rb_keypair_xonly_pub(rb_ctx, xonly, NULL, kp96)) return 0;
	return rb_xonly_serialize(rb_ctx, pub32, xonly);
}

static int rb_sign(const unsigned char *kp96, const unsigned char *msg32, const unsigned char *aux32, unsigned char *sig64) {
	return rb_sign32(rb_ctx, sig64, msg32, kp96, aux32);
}

static int rb_verify_sig(const unsigned char *pub32, const unsigned char *msg32, const unsigned char *sig64) {
	unsigned char xonly[64];
	if (!rb_xonly_parse(rb_ctx, xonly, pub32)) return 0;
	return rb_verify(rb_ctx, sig64, msg32, 32, xonly);
}
*/
import "C"

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// libNames are tried in order.
var libNames = []string{"libsecp256k1.so.1", "libsecp256k1.so.2", "libsecp256k1.so"}

type libsecp struct{ lib string }

func loadLibsecp() (Signer, error) { return loadFrom(libNames) }

// loadMu serializes loads: rb_load writes C globals.
var loadMu sync.Mutex

// loadFrom loads the first of names that opens and has every symbol.
func loadFrom(names []string) (Signer, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	var errs []string
	for _, name := range names {
		cname := C.CString(name)
		msg := C.rb_load(cname)
		C.free(unsafe.Pointer(cname))
		if msg == nil {
			s := &libsecp{lib: name}
			if err := s.selfTest(); err != nil {
				return nil, err
			}
			return s, nil
		}
		errs = append(errs, C.GoString(msg))
	}
	return nil, fmt.Errorf("libsecp256k1 not loadable: %s", strings.Join(errs, "; "))
}

// selfTest signs and verifies BIP-340 test vector 1, so that a broken or
// ABI-incompatible library is rejected rather than trusted.
func (s *libsecp) selfTest() error {
	var sk, msg, aux [32]byte
	hex.Decode(sk[:], []byte("b7e151628aed2a6abf7158809cf4f3c762e7160f38b4da56a784d9045190cfef"))
	hex.Decode(msg[:], []byte("243f6a8885a308d313198a2e03707344a4093822299f31d0082efa98ec4e6c89"))
	aux[31] = 1
	want, _ := hex.DecodeString("6896bd60eeae296db48a229ff71dfe071bde413e6d43f917dc8dcf8c78de33418906d11ac976abccb20b091292bff4ea897efcb639ea871cfa95f6de339e4b0a")
	k, err := s.NewKey(sk)
	if err != nil {
		return err
	}
	sig, err := s.SignKey(k, &msg, &aux)
	if err != nil {
		return err
	}
	if !bytes.Equal(sig[:], want) || !s.verify(&k.Pub, &msg, &sig) {
		return errors.New("libsecp256k1 failed its BIP-340 self-test")
	}
	return nil
}

func (s *libsecp) Name() string { return NameLibsecp256k1 }

func (s *libsecp) NewKey(sk [32]byte) (*Key, error) {
	if err := checkSecret(&sk); err != nil {
		return nil, err
	}
	k := &Key{backend: NameLibsecp256k1}
	if C.rb_keypair((*C.uchar)(&sk[0]), (*C.uchar)(&k.kp[0]), (*C.uchar)(&k.Pub[0])) != 1 {
		return nil, ErrInvalidSecret
	}
	return k, nil
}

func (s *libsecp) PubKey(sk *[32]byte) ([32]byte, error) {
	k, err := s.NewKey(*sk)
	if err != nil {
		return [32]byte{}, err
	}
	return k.Pub, nil
}

func (s *libsecp) Sign(sk, msg, aux *[32]byte) ([64]byte, error) {
	k, err := s.NewKey(*sk)
	if err != nil {
		return [64]byte{}, err
	}
	return s.SignKey(k, msg, aux)
}

func (s *libsecp) SignKey(k *Key, msg, aux *[32]byte) ([64]byte, error) {
	var sig [64]byte
	if k == nil || k.backend != NameLibsecp256k1 {
		return sig, fmt.Errorf("secp: libsecp256k1 cannot sign with a key made by %q", keyBackend(k))
	}
	aux = auxOrZero(aux)
	if C.rb_sign((*C.uchar)(&k.kp[0]), (*C.uchar)(&msg[0]), (*C.uchar)(&aux[0]), (*C.uchar)(&sig[0])) != 1 {
		return sig, errors.New("secp: libsecp256k1 schnorrsig_sign32 failed")
	}
	return sig, nil
}

func (s *libsecp) verify(pub, msg *[32]byte, sig *[64]byte) bool {
	return C.rb_verify_sig((*C.uchar)(&pub[0]), (*C.uchar)(&msg[0]), (*C.uchar)(&sig[0])) == 1
}
