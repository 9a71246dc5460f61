package corpus

import (
	"context"
	"slices"
	"testing"
)

// TestAuthorPubkeysAsGenerated: the keys derived without signing are the
// generated corpus's authors, in order, for several seeds and counts.
func TestAuthorPubkeysAsGenerated(t *testing.T) {
	for _, p := range []Params{{Seed: 1, Events: 20, Authors: 7}, {Seed: 42, Events: 5, Authors: 12}, {Seed: 0, Events: 3, Authors: 1}} {
		c, err := Generate(context.Background(), p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := make([]string, len(c.Authors))
		for i, a := range c.Authors {
			want[i] = a.PubKey
		}
		got, err := AuthorPubkeys(p, Options{})
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("seed %d authors %d: %v %v, want %v", p.Seed, p.Authors, got, err, want)
		}
	}
	if _, err := AuthorPubkeys(Params{Authors: -1}, Options{}); err == nil {
		t.Error("negative authors accepted")
	}
}
