package secp

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"

	gonostr "github.com/nbd-wtf/go-nostr"
)

// BIP-340 test vectors 0–3 (signing vectors, with aux randomness).
var vectors = []struct{ sk, pub, aux, msg, sig string }{
	{
		"0000000000000000000000000000000000000000000000000000000000000003",
		"F9308A019258C31049344F85F89D5229B531C845836F99B08601F113BCE036F9",
		"0000000000000000000000000000000000000000000000000000000000000000",
		"0000000000000000000000000000000000000000000000000000000000000000",
		"E907831F80848D1069A5371B402410364BDF1C5F8307B0084C55F1CE2DCA821525F66A4A85EA8B71E482A74F382D2CE5EBEEE8FDB2172F477DF4900D310536C0",
	},
	{
		"B7E151628AED2A6ABF7158809CF4F3C762E7160F38B4DA56A784D9045190CFEF",
		"DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659",
		"0000000000000000000000000000000000000000000000000000000000000001",
		"243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89",
		"6896BD60EEAE296DB48A229FF71DFE071BDE413E6D43F917DC8DCF8C78DE33418906D11AC976ABCCB20B091292BFF4EA897EFCB639EA871CFA95F6DE339E4B0A",
	},
	{
		"C90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B14E5C9",
		"DD308AFEC5777E13121FA72B9CC1B7CC0139715309B086C960E18FD969774EB8",
		"C87AA53824B4D7AE2EB035A2B5BBBCCC080E76CDC6D1692C4B0B62D798E6D906",
		"7E2D58D8B3BCDF1ABADEC7829054F90DDA9805AAB56C77333024B9D0A508B75C",
		"5831AAEED7B44BB74E5EAB94BA9D4294C49BCF2A60728D8B4C200F50DD313C1BAB745879A5AD954A72C45A91C3A51D3C7ADEA98D82F8481E0E1E03674A6F3FB7",
	},
	{
		"0B432B2677937381AEF05BB02A66ECD012773062CF3FA2549E44F58ED2401710",
		"25D1DFF95105F5253C4022F628A996AD3A0D95FBF21D468A1B33F8C160D8F517",
		"FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",
		"FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",
		"7EB0509757E246F19449885651611CB965ECC1A187DD51B64FDA1EDC9637D5EC97582B9CB13DB3933705B32BA982AF5AF25FD78881EBB32771FC5922EFC66EA3",
	},
}

func h32(t testing.TB, s string) (out [32]byte) {
	t.Helper()
	if _, err := hex.Decode(out[:], []byte(s)); err != nil {
		t.Fatal(err)
	}
	return out
}

// backends returns every backend available in this build. libsecp256k1 is
// installed on the development machine and in CI, so its absence fails the
// test unless the build has no cgo.
func backends(t testing.TB) []Signer {
	t.Helper()
	out := []Signer{Btcec()}
	lib, err := Libsecp256k1()
	if err != nil {
		if strings.Contains(err.Error(), "without cgo") {
			t.Log(err)
			return out
		}
		t.Fatalf("libsecp256k1 should load here (install libsecp256k1-1): %v", err)
	}
	return append(out, lib)
}

func TestVectors(t *testing.T) {
	for _, s := range backends(t) {
		for i, v := range vectors {
			sk, aux, msg := h32(t, v.sk), h32(t, v.aux), h32(t, v.msg)
			pub, err := s.PubKey(&sk)
			if err != nil {
				t.Fatalf("%s vector %d: %v", s.Name(), i, err)
			}
			if got := strings.ToUpper(hex.EncodeToString(pub[:])); got != v.pub {
				t.Errorf("%s vector %d: pubkey %s, want %s", s.Name(), i, got, v.pub)
			}
			sig, err := s.Sign(&sk, &msg, &aux)
			if err != nil {
				t.Fatalf("%s vector %d: %v", s.Name(), i, err)
			}
			if got := strings.ToUpper(hex.EncodeToString(sig[:])); got != v.sig {
				t.Errorf("%s vector %d: sig %s, want %s", s.Name(), i, got, v.sig)
			}
			if !Verify(&pub, &msg, &sig) || !VerifyBtcec(&pub, &msg, &sig) {
				t.Errorf("%s vector %d: signature does not verify", s.Name(), i)
			}
			sig[5] ^= 1
			if Verify(&pub, &msg, &sig) || VerifyBtcec(&pub, &msg, &sig) {
				t.Errorf("%s vector %d: corrupted signature verifies", s.Name(), i)
			}
		}
	}
}

// TestCrossBackend signs many messages with each backend and checks the
// signature with the other backend and with go-nostr's CheckSignature on a
// real event, and that both backends agree byte for byte.
func TestCrossBackend(t *testing.T) {
	bs := backends(t)
	for i := range 50 {
		var sk [32]byte
		binary.LittleEndian.PutUint64(sk[:], uint64(i))
		sk = sha256.Sum256(sk[:])
		ev := gonostr.Event{CreatedAt: gonostr.Timestamp(1700000000 + i), Kind: 1,
			Tags: gonostr.Tags{{"t", "nostr"}}, Content: "hello \"world\" 🤙 " + strings.Repeat("é", i)}
		var sigs []string
		for _, s := range bs {
			k, err := s.NewKey(sk)
			if err != nil {
				t.Fatal(err)
			}
			ev.PubKey = hex.EncodeToString(k.Pub[:])
			id := h32(t, ev.GetID())
			aux := sha256.Sum256(id[:])
			if i%2 == 0 {
				aux = [32]byte{}
			}
			sig, err := s.SignKey(k, &id, &aux)
			if err != nil {
				t.Fatal(err)
			}
			if !VerifyBtcec(&k.Pub, &id, &sig) || !Verify(&k.Pub, &id, &sig) {
				t.Fatalf("%s signature does not verify", s.Name())
			}
			e := ev
			e.ID = hex.EncodeToString(id[:])
			e.Sig = hex.EncodeToString(sig[:])
			if ok, err := e.CheckSignature(); !ok || err != nil {
				t.Fatalf("%s: go-nostr rejects the signature: %v", s.Name(), err)
			}
			sigs = append(sigs, e.Sig)
			// Sign (no precomputed key) agrees with SignKey.
			sig2, err := s.Sign(&sk, &id, &aux)
			if err != nil || sig2 != sig {
				t.Fatalf("%s: Sign and SignKey differ (%v)", s.Name(), err)
			}
		}
		for _, s := range sigs[1:] {
			if s != sigs[0] {
				t.Fatalf("backends disagree: %s vs %s", sigs[0], s)
			}
		}
	}
}

func TestInvalidSecret(t *testing.T) {
	for _, s := range backends(t) {
		var zero [32]byte
		if _, err := s.NewKey(zero); err == nil {
			t.Errorf("%s accepts a zero key", s.Name())
		}
		if _, err := s.NewKey(curveN); err == nil {
			t.Errorf("%s accepts n as a key", s.Name())
		}
		nm1 := curveN
		nm1[31]--
		if _, err := s.NewKey(nm1); err != nil {
			t.Errorf("%s rejects n-1: %v", s.Name(), err)
		}
	}
}

func TestKeyFromOtherBackend(t *testing.T) {
	bs := backends(t)
	if len(bs) < 2 {
		t.Skip("one backend only")
	}
	sk := h32(t, vectors[1].sk)
	k, err := bs[0].NewKey(sk)
	if err != nil {
		t.Fatal(err)
	}
	var msg [32]byte
	if _, err := bs[1].SignKey(k, &msg, nil); err == nil {
		t.Error("libsecp256k1 signed with a btcec key")
	}
}

func TestSelect(t *testing.T) {
	if s, err := Select("btcec"); err != nil || s.Name() != NameBtcec {
		t.Errorf("Select(btcec) = %v, %v", s, err)
	}
	if _, err := Select("openssl"); err == nil {
		t.Error("Select accepts an unknown backend")
	}
	t.Setenv(EnvVar, "nope")
	if _, err := FromEnv(); err == nil {
		t.Error("FromEnv accepts an unknown backend")
	}
	var msg [32]byte
	sk := h32(t, vectors[1].sk)
	if _, err := Default().Sign(&sk, &msg, nil); err == nil {
		t.Error("Default with a bad RELAYBENCH_SIGNER signs anyway")
	}
	t.Setenv(EnvVar, "btcec")
	if Default().Name() != NameBtcec {
		t.Error("RELAYBENCH_SIGNER=btcec not honoured")
	}
	if _, err := Libsecp256k1(); err == nil {
		t.Setenv(EnvVar, "libsecp256k1")
		if Default().Name() != NameLibsecp256k1 {
			t.Error("RELAYBENCH_SIGNER=libsecp256k1 not honoured")
		}
		t.Setenv(EnvVar, "")
		if Default().Name() != NameLibsecp256k1 {
			t.Error("automatic choice is not libsecp256k1 although it loads")
		}
	} else {
		if _, err := Select(NameLibsecp256k1); err == nil {
			t.Error("forcing an unloadable libsecp256k1 is not an error")
		}
		t.Setenv(EnvVar, "")
		if Default().Name() != NameBtcec {
			t.Error("automatic choice is not btcec although libsecp256k1 does not load")
		}
	}
}

func BenchmarkSign(b *testing.B) {
	for _, s := range backends(b) {
		b.Run(s.Name(), func(b *testing.B) {
			k, err := s.NewKey(h32(b, vectors[2].sk))
			if err != nil {
				b.Fatal(err)
			}
			msg, aux := h32(b, vectors[2].msg), h32(b, vectors[2].aux)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				msg[0] = byte(i)
				if _, err := s.SignKey(k, &msg, &aux); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkVerify(b *testing.B) {
	s := Btcec()
	k, _ := s.NewKey(h32(b, vectors[2].sk))
	msg, aux := h32(b, vectors[2].msg), h32(b, vectors[2].aux)
	sig, _ := s.SignKey(k, &msg, &aux)
	b.Run("default", func(b *testing.B) {
		for b.Loop() {
			if !Verify(&k.Pub, &msg, &sig) {
				b.Fatal("bad")
			}
		}
	})
	b.Run("btcec", func(b *testing.B) {
		for b.Loop() {
			if !VerifyBtcec(&k.Pub, &msg, &sig) {
				b.Fatal("bad")
			}
		}
	})
}
