package corpus

import (
	"encoding/hex"

	"github.com/relaybench/relaybench/internal/secp"
)

// AuthorPubkeys are the hex public keys of the synthetic authors of a
// corpus of p (defaults applied): its Authors' PubKeys, in order, derived
// from p.Seed and p.Authors alone, as Generate derives them, without
// generating or signing one event. Only the key derivation is paid for
// (one scalar multiplication an author).
func AuthorPubkeys(p Params, o Options) ([]string, error) {
	_, _, authors, keys, err := authorsOf(p, o)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(authors))
	for i := range authors {
		out[i] = hex.EncodeToString(keys[i].Pub[:])
	}
	return out, nil
}

// authorsOf applies p's defaults, validates it and derives its synthetic
// authors and their keys with o's signer: what Generate and AuthorPubkeys
// both start from.
func authorsOf(p Params, o Options) (Params, secp.Signer, []Author, []*secp.Key, error) {
	p = p.WithDefaults()
	if err := p.Validate(); err != nil {
		return p, nil, nil, nil, err
	}
	signer, err := o.signer()
	if err != nil {
		return p, nil, nil, nil, err
	}
	authors, keys, err := makeAuthors(p.Seed, p.Authors, signer)
	return p, signer, authors, keys, err
}
