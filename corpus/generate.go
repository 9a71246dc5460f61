package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/secp"
	"github.com/relaybench/relaybench/nostr"
)

// Generation runs as a pipeline: one goroutine builds events in order from a
// single seeded PRNG (content, tags, created_at, id) and hands batches of
// batchSize events to the signing workers. A repost embeds the signed JSON of
// an earlier note; it only picks notes at least repostLag batches back and
// waits for that batch, so the output never depends on scheduling.
const (
	batchSize = 64
	repostLag = 16
)

// Generate builds the corpus described by p (defaults applied) without
// touching the cache, signing on o.Workers cores. It stops promptly with
// ctx.Err() when ctx is cancelled.
func Generate(ctx context.Context, p Params, o Options) (*Corpus, error) {
	p = p.WithDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	signer, err := o.signer()
	if err != nil {
		return nil, err
	}
	start := mono.Now()
	authors, keys, err := makeAuthors(p.Seed, p.Authors, signer)
	if err != nil {
		return nil, err
	}
	g := newGenerator(p, authors, keys, signer)
	if err := g.run(ctx, workers(o.Workers), o.Progress); err != nil {
		return nil, err
	}
	c := &Corpus{
		Params:       p,
		Key:          p.Key(),
		Events:       g.events,
		Raw:          g.raw,
		Authors:      authors,
		Signer:       signer.Name(),
		SignDuration: time.Duration(mono.Since(start)),
	}
	for _, r := range c.Raw {
		c.Bytes += int64(len(r))
	}
	return c, nil
}

func workers(n int) int {
	if n <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return n
}

// authorSecret derives author i's secret key from the seed; ctr moves on
// past the (astronomically rare) invalid candidates.
func authorSecret(seed int64, i int, ctr uint64) [32]byte {
	var b [8 + 17 + 8 + 8]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(seed))
	copy(b[8:], "relaybench/author")
	binary.LittleEndian.PutUint64(b[25:], uint64(i))
	binary.LittleEndian.PutUint64(b[33:], ctr)
	return sha256.Sum256(b[:])
}

func makeAuthors(seed int64, n int, signer secp.Signer) ([]Author, []*secp.Key, error) {
	authors := make([]Author, n)
	keys := make([]*secp.Key, n)
	for i := range n {
		for ctr := uint64(0); ; ctr++ {
			sk := authorSecret(seed, i, ctr)
			k, err := signer.NewKey(sk)
			if errors.Is(err, secp.ErrInvalidSecret) {
				continue
			}
			if err != nil {
				return nil, nil, fmt.Errorf("corpus: author key: %w", err)
			}
			authors[i] = Author{PubKey: hex.EncodeToString(k.Pub[:]), Secret: sk}
			keys[i] = k
			break
		}
	}
	return authors, keys, nil
}

type generator struct {
	p       Params
	signer  secp.Signer
	authors []Author
	keys    []*secp.Key
	auxMask [32]byte

	rng        *rand.Rand
	authorZipf *rand.Zipf
	tagZipf    *rand.Zipf

	events   []*nostr.Event
	slab     []nostr.Event
	ids      [][32]byte
	authorOf []int32
	raw      [][]byte
	done     []chan struct{} // closed when batch b is signed

	notes        []int32 // kind-1 events: reply, reaction and repost targets
	lastReplace  map[int64]int64
	contentBytes int64
	arena        []byte     // serializations of the batch being built
	batchArena   [][]byte   // the arena of each batch, recycled once signed
	arenas       sync.Pool  // of *[]byte
	ser          [][]byte   // ser[i]: serialization of event i until signed
	serAt        [][2]int32 // where its tags and content start
	content      []byte
}

func newGenerator(p Params, authors []Author, keys []*secp.Key, signer secp.Signer) *generator {
	n := p.Events
	var seed [8]byte
	binary.LittleEndian.PutUint64(seed[:], uint64(p.Seed))
	rng := rand.New(rand.NewPCG(uint64(p.Seed), 0x72656c617962656e)) // "relayben"
	g := &generator{
		p: p, signer: signer, authors: authors, keys: keys,
		auxMask:     sha256.Sum256(append(seed[:], "relaybench/aux"...)),
		rng:         rng,
		authorZipf:  rand.NewZipf(rng, 1.1, 4, uint64(len(authors)-1)),
		tagZipf:     rand.NewZipf(rng, 1.2, 1, uint64(len(hashtags)-1)),
		events:      make([]*nostr.Event, n),
		slab:        make([]nostr.Event, n),
		ids:         make([][32]byte, n),
		authorOf:    make([]int32, n),
		raw:         make([][]byte, n),
		ser:         make([][]byte, n),
		serAt:       make([][2]int32, n),
		batchArena:  make([][]byte, (n+batchSize-1)/batchSize),
		done:        make([]chan struct{}, (n+batchSize-1)/batchSize),
		lastReplace: map[int64]int64{},
	}
	for i := range g.events {
		g.events[i] = &g.slab[i]
	}
	for i := range g.done {
		g.done[i] = make(chan struct{})
	}
	return g
}

// run generates every event and signs them with nw workers.
func (g *generator) run(ctx context.Context, nw int, progress func(done, total int)) error {
	ictx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	jobs := make(chan int, 4)
	var wg sync.WaitGroup
	var mu sync.Mutex
	signed := 0
	for range nw {
		wg.Go(func() {
			for b := range jobs {
				if ictx.Err() != nil {
					continue
				}
				n, err := g.signBatch(b)
				if err != nil {
					cancel(err)
					continue
				}
				close(g.done[b])
				if progress != nil {
					mu.Lock()
					signed += n
					progress(signed, len(g.events))
					mu.Unlock()
				}
			}
		})
	}
	err := g.produce(ictx, jobs)
	close(jobs)
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if cause := context.Cause(ictx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

// produce builds events in order and queues each full batch.
func (g *generator) produce(ctx context.Context, jobs chan<- int) error {
	send := func(b int) error {
		select {
		case jobs <- b:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	for i := range g.events {
		if i > 0 && i%batchSize == 0 {
			if err := send(i/batchSize - 1); err != nil {
				return err
			}
		}
		if err := g.next(ctx, i); err != nil {
			return err
		}
	}
	return send(len(g.done) - 1)
}

// signBatch signs batch b and builds its wire JSON.
func (g *generator) signBatch(b int) (int, error) {
	lo, hi := b*batchSize, min(len(g.events), (b+1)*batchSize)
	size := 0
	for i := lo; i < hi; i++ {
		size += 300 + len(g.ser[i])
	}
	buf := make([]byte, 0, size)
	var offs [batchSize + 1]int
	for i := lo; i < hi; i++ {
		e := g.events[i]
		aux := g.ids[i]
		for j := range aux {
			aux[j] ^= g.auxMask[j]
		}
		sig, err := g.signer.SignKey(g.keys[g.authorOf[i]], &g.ids[i], &aux)
		if err != nil {
			return 0, fmt.Errorf("corpus: signing event %d: %w", i, err)
		}
		e.Sig = hex.EncodeToString(sig[:])
		buf = appendWire(buf, e, g.ser[i], int(g.serAt[i][0]), int(g.serAt[i][1]))
		g.ser[i] = nil
		offs[i-lo+1] = len(buf)
	}
	for i := lo; i < hi; i++ {
		g.raw[i] = buf[offs[i-lo]:offs[i-lo+1]:offs[i-lo+1]]
	}
	a := g.batchArena[b]
	g.batchArena[b] = nil
	g.arenas.Put(&a)
	return hi - lo, nil
}

// next builds event i: author, kind, created_at, tags, content and id.
func (g *generator) next(ctx context.Context, i int) error {
	p := &g.p
	rng := g.rng
	e := g.events[i]
	a := int(g.authorZipf.Uint64())
	e.PubKey = g.authors[a].PubKey
	g.authorOf[i] = int32(a)

	// created_at: evenly through the window in publish order, with jitter.
	step := float64(p.Window/time.Second) / float64(p.Events)
	t := p.windowStart() + int64(float64(i)*step) + rng.Int64N(int64(max(1, 3*step)))
	t = min(t, p.Anchor)

	kind := 1
	if p.Spread > 0 {
		switch r := rng.IntN(1000); {
		case r < 700:
			kind = 1
		case r < 820:
			kind = 7
		case r < 880:
			kind = 6
		case r < 920:
			kind = 0
		case r < 950:
			kind = 3
		default:
			kind = 30023
		}
	}
	if (kind == 6 || kind == 7) && len(g.notes) == 0 || kind == 3 && len(g.authors) < 2 {
		kind = 1
	}
	if kind == 0 || kind == 3 {
		// replaceable: strictly newer than this author's previous one, so
		// the corpus has no created_at ties between replacements.
		k := int64(a)<<32 | int64(kind)
		if last, ok := g.lastReplace[k]; ok && t <= last {
			t = last + 1
		}
		if t > p.Anchor {
			kind = 1
			t = p.Anchor
		} else {
			g.lastReplace[k] = t
		}
	}
	e.Kind = kind
	e.Tags = nil
	avg := float64(p.AvgSize)
	c := g.content[:0]
	switch kind {
	case 1:
		size := p.AvgSize
		if p.Spread > 0 {
			// Steer toward the overall average: other kinds' contents have
			// their own shapes, kind 1 absorbs the difference.
			deficit := avg*float64(i) - float64(g.contentBytes)
			mean := max(avg/8, min(4*avg, avg+deficit/16))
			size = logNormalSize(rng, mean, p.Spread, max(1, p.AvgSize/8), 4*p.AvgSize)
		}
		var tags []string
		c, tags, t = g.note(c, i, size, t)
		if len(tags) > 0 {
			c = appendHashtags(c, tags, size)
		}
	case 7:
		j := g.pickNote(len(g.notes))
		t = max(t, g.events[j].CreatedAt)
		r := reactions[rng.IntN(len(reactions))]
		c = append(c, r...)
		e.Tags = []nostr.Tag{{"e", g.events[j].ID}, {"p", g.events[j].PubKey}, {"k", "1"}}
		if r[0] == ':' {
			name := r[1 : len(r)-1]
			e.Tags = append(e.Tags, nostr.Tag{"emoji", name, "https://example.com/emoji/" + name + ".gif"})
		}
	case 6:
		eligible := sort.Search(len(g.notes), func(k int) bool {
			return int(g.notes[k]) >= (i/batchSize-repostLag)*batchSize
		})
		var j int
		if eligible > 0 && p.AvgSize >= 256 && rng.IntN(10) < 8 {
			j = g.pickNote(eligible)
			select { // wait until the note's batch is signed
			case <-g.done[j/batchSize]:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			c = append(c, g.raw[j]...)
		} else {
			j = g.pickNote(len(g.notes))
		}
		t = max(t, g.events[j].CreatedAt)
		e.Tags = []nostr.Tag{{"e", g.events[j].ID, "wss://relay.example.com"}, {"p", g.events[j].PubKey}}
	case 0:
		about := logNormalSize(rng, max(20, min(300, avg/3)), 0.8, 0, 1000)
		c = appendProfile(c, rng, a, e.PubKey, about)
	case 3:
		c, e.Tags = g.contacts(c, a)
	case 30023:
		c, e.Tags = g.article(c, i, t)
	}
	e.CreatedAt = t
	e.Content = string(c)
	g.content = c
	g.contentBytes += int64(len(c))
	if kind == 1 {
		g.notes = append(g.notes, int32(i))
	}

	// Serialize into the batch arena: the id is its hash, and the signing
	// worker reuses its escaped tags and content for the wire JSON.
	if i%batchSize == 0 {
		if a, ok := g.arenas.Get().(*[]byte); ok {
			g.arena = (*a)[:0]
		} else {
			g.arena = make([]byte, 0, batchSize*(2*p.AvgSize+600))
		}
	}
	start := len(g.arena)
	var tagsAt, contentAt int
	g.arena, tagsAt, contentAt = appendSerialized(g.arena, e)
	g.batchArena[i/batchSize] = g.arena
	g.ser[i] = g.arena[start:len(g.arena):len(g.arena)]
	g.serAt[i] = [2]int32{int32(tagsAt), int32(contentAt)}
	g.ids[i] = sha256.Sum256(g.ser[i])
	e.ID = hex.EncodeToString(g.ids[i][:])
	return nil
}

// pickNote picks one of the first n notes, favouring recent ones.
func (g *generator) pickNote(n int) int {
	return int(g.notes[n-1-skewed(g.rng.Uint64(), n)])
}

// pickAuthor picks an author with the corpus's skewed popularity.
func (g *generator) pickAuthor() int { return int(g.authorZipf.Uint64()) }

// note builds a kind-1 note of size content bytes with its tags: replies
// (e root/reply markers and p), mentions, and t tags on about 40% of notes.
// It returns the hashtags to write into the content.
func (g *generator) note(c []byte, i, size int, t int64) ([]byte, []string, int64) {
	rng := g.rng
	e := g.events[i]
	r := rng.Uint64()
	if r%100 < 25 && len(g.notes) > 0 {
		j := g.pickNote(len(g.notes))
		target := g.events[j]
		t = max(t, target.CreatedAt)
		root := ""
		for _, tg := range target.Tags {
			if len(tg) >= 4 && tg[0] == "e" && tg[3] == "root" {
				root = tg[1]
			}
		}
		if root == "" {
			e.Tags = append(e.Tags, nostr.Tag{"e", target.ID, "", "root"})
		} else {
			e.Tags = append(e.Tags, nostr.Tag{"e", root, "", "root"}, nostr.Tag{"e", target.ID, "", "reply"})
		}
		e.Tags = append(e.Tags, nostr.Tag{"p", target.PubKey})
	}
	if (r>>8)%100 < 12 {
		e.Tags = append(e.Tags, nostr.Tag{"p", g.authors[g.pickAuthor()].PubKey})
	}
	var tags []string
	if (r>>16)%100 < 40 {
		n := 1 + int((r>>24)%3)
		for range n {
			h := hashtags[g.tagZipf.Uint64()]
			if !contains(tags, h) {
				tags = append(tags, h)
				e.Tags = append(e.Tags, nostr.Tag{"t", h})
			}
		}
	}
	// leave room for " #tag" per hashtag when they fit
	room := 0
	for _, h := range tags {
		room += 2 + len(h)
	}
	if room > size {
		room = 0
	}
	return appendContent(c, rng, size-room), tags, t
}

// appendHashtags writes " #tag" for each tag if the content has room left
// up to size; otherwise it pads back to size.
func appendHashtags(c []byte, tags []string, size int) []byte {
	for _, h := range tags {
		if len(c)+2+len(h) > size {
			break
		}
		c = append(c, " #"...)
		c = append(c, h...)
	}
	for len(c) < size {
		c = append(c, '.')
	}
	return c
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// contacts builds a kind-3 contact list of author a: many p tags, popular
// authors followed more; content empty or a legacy relay list.
func (g *generator) contacts(c []byte, a int) ([]byte, []nostr.Tag) {
	rng := g.rng
	n := logNormalSize(rng, 40, 1.0, 1, min(500, len(g.authors)-1))
	seen := make(map[int]struct{}, n)
	tags := make([]nostr.Tag, 0, n)
	for tries := 0; len(tags) < n; tries++ {
		var f int
		if tries < 4*n && rng.IntN(2) == 0 {
			f = g.pickAuthor()
		} else {
			f = rng.IntN(len(g.authors))
		}
		if _, dup := seen[f]; dup || f == a {
			continue
		}
		seen[f] = struct{}{}
		if rng.IntN(5) == 0 {
			tags = append(tags, nostr.Tag{"p", g.authors[f].PubKey, "wss://nos.lol", authorName(f)})
		} else {
			tags = append(tags, nostr.Tag{"p", g.authors[f].PubKey})
		}
	}
	if rng.IntN(10) < 3 {
		c = append(c, relayList...)
	}
	return c, tags
}

// article builds a kind-30023 long-form post: a unique d tag, title,
// published_at, summary, t tags; markdown content of about 3× AvgSize.
func (g *generator) article(c []byte, i int, t int64) ([]byte, []nostr.Tag) {
	rng := g.rng
	p := &g.p
	tb := make([]byte, 0, 64)
	for k := range 3 + rng.IntN(5) {
		if k > 0 {
			tb = append(tb, ' ')
		}
		tb = append(tb, english.words[skewed(rng.Uint64(), len(english.words))]...)
	}
	title := string(tb)
	d := strconv.AppendInt([]byte("article-"), int64(i), 36)
	d = append(d, '-')
	d = append(d, english.words[rng.IntN(len(english.words))]...)
	tags := []nostr.Tag{
		{"d", string(d)},
		{"title", title},
		{"published_at", strconv.FormatInt(t, 10)},
		{"summary", Content(rng, 40+rng.IntN(120))},
	}
	for range 1 + rng.IntN(3) {
		h := hashtags[g.tagZipf.Uint64()]
		tags = append(tags, nostr.Tag{"t", h})
	}
	if rng.IntN(2) == 0 {
		tags = append(tags, nostr.Tag{"image", "https://image.example.com/" + strconv.Itoa(i) + ".jpg"})
	}
	size := logNormalSize(rng, 3*float64(p.AvgSize), p.Spread, p.AvgSize, 6*p.AvgSize)
	return appendLongForm(c, rng, title, size), tags
}
