package corpus

import "encoding/hex"

// AuthorPubkeys are the hex public keys of the synthetic authors of a
// corpus of p (defaults applied): its Authors' PubKeys, in order, derived
// from p.Seed and p.Authors alone, as Generate derives them, without
// generating or signing one event. Only the key derivation is paid for
// (one scalar multiplication an author).
func AuthorPubkeys(p Params, o Options) ([]string, error) {
	p = p.WithDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	signer, err := o.signer()
	if err != nil {
		return nil, err
	}
	authors, keys, err := makeAuthors(p.Seed, p.Authors, signer)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(authors))
	for i := range authors {
		out[i] = hex.EncodeToString(keys[i].Pub[:])
	}
	return out, nil
}
