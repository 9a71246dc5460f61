//go:build !cgo

package secp

import "errors"

func loadLibsecp() (Signer, error) {
	return nil, errors.New("libsecp256k1 not loadable: built without cgo")
}
