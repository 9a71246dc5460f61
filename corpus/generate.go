package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
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
//
// Memory does not grow with the corpus: the tables that reach back over the
// whole corpus (every note's id, created_at, author and thread root; every
// event's file offset) keep only their newest chunks in memory and the rest
// in an unlinked temporary file (spillTable), read back a record at a time.
const (
	batchSize = 64
	repostLag = 16
)

// Generate builds the corpus described by p (defaults applied) without
// touching the cache, signing on o.Workers cores. It stops promptly with
// ctx.Err() when ctx is cancelled. A corpus bigger than o.StreamAbove is
// written to a temporary file as it is signed and streamed from it (the
// file is unlinked once mapped: its space is freed when the process exits).
func Generate(ctx context.Context, p Params, o Options) (*Corpus, error) {
	return generate(ctx, p, o, "", "")
}

// generate builds the corpus for p; when dir is set it writes the corpus
// file there as it signs and renames it to path at the end.
func generate(ctx context.Context, p Params, o Options, dir, path string) (*Corpus, error) {
	start := mono.Now()
	p, signer, authors, keys, err := authorsOf(p, o)
	if err != nil {
		return nil, err
	}
	key := p.Key()
	stream := o.streams(p.Events)
	note := ""
	var fw *fileWriter
	if dir != "" {
		err := os.MkdirAll(dir, 0o755)
		if err == nil {
			fw, err = newFileWriter(dir, "."+filepath.Base(path)+".tmp-", key, signer.Name(), authors, p.Events)
		}
		if err != nil {
			note = fmt.Sprintf("corpus: cannot write cache: %v", err)
			fw = nil
		}
	}
	if fw == nil && stream {
		path = "" // a temporary file, removed once mapped
		if fw, err = newFileWriter(os.TempDir(), "relaybench-corpus-", key, signer.Name(), authors, p.Events); err != nil {
			return nil, fmt.Errorf("corpus: a corpus of %d events is streamed from a file: %w", p.Events, err)
		}
	}
	tmp := os.TempDir()
	if fw != nil {
		tmp = filepath.Dir(fw.f.Name())
	}
	g := newGenerator(p, authors, keys, signer, !stream, fw, tmp)
	err = g.run(ctx, workers(o.Workers), o.Progress)
	g.notes.close()
	if err != nil {
		if fw != nil {
			fw.discard()
		}
		return nil, err
	}
	c := &Corpus{
		Params:       p,
		Key:          key,
		Authors:      authors,
		Signer:       signer.Name(),
		SignDuration: time.Duration(mono.Since(start)),
		Bytes:        g.bytes,
	}
	if !stream {
		c.Events, c.Raw = g.events, g.raw
	}
	if fw == nil {
		return c, nil
	}
	name := fw.f.Name()
	err = fw.finish()
	if err == nil && path != "" {
		if err = os.Rename(name, path); err == nil {
			name = path
		}
	}
	if err != nil {
		os.Remove(name)
		if stream {
			return nil, fmt.Errorf("corpus: cannot write the corpus file: %w", err)
		}
		c.CacheNote = fmt.Sprintf("corpus: cannot write cache %s: %v", path, err)
		return c, nil
	}
	if stream {
		s, _, _, err := openStore(name, p, key, false)
		if path == "" {
			os.Remove(name)
		}
		if err != nil {
			return nil, err
		}
		c.store = s
		c.indexAuthors()
	}
	c.CacheNote = note
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

	keep   bool           // keep every event and its JSON (Corpus.Events, Raw)
	events []*nostr.Event // keep only
	slab   []nostr.Event  // keep only
	raw    [][]byte       // keep only
	out    *fileWriter    // where signed batches are written, in order (nil: none)
	bytes  int64          // total wire JSON

	// Everything later events refer to, compactly: reply, reaction and
	// repost targets are kind-1 notes, picked all the way back. Only the
	// newest notes are in memory (see spillTable).
	notes        *spillTable // of noteRec, by note number
	nrec         [noteRecSize]byte
	err          error // reading notes back
	lastReplace  map[int64]int64
	contentBytes int64
	content      []byte

	cur     *genBatch // the batch being built
	batches sync.Pool // of *genBatch

	mu      sync.Mutex
	written int           // batches [0, written) are signed and written (flushed)
	wEvents int           // events written (out.count when written moved)
	wPos    int64         // and the file's length then
	wake    chan struct{} // closed when written moves
}

// noteRec is what later events need of a kind-1 note.
type noteRec struct {
	id     [32]byte
	at     uint32 // created_at - windowStart
	idx    int32  // event index
	author int32
	root   int32 // note number of its thread's root, -1 when it is a root
}

// noteRecSize is a noteRec's size in its table.
const noteRecSize = 48

func (n *noteRec) put(b []byte) {
	copy(b, n.id[:])
	binary.LittleEndian.PutUint32(b[32:], n.at)
	binary.LittleEndian.PutUint32(b[36:], uint32(n.idx))
	binary.LittleEndian.PutUint32(b[40:], uint32(n.author))
	binary.LittleEndian.PutUint32(b[44:], uint32(n.root))
}

func (n *noteRec) get(b []byte) {
	copy(n.id[:], b)
	n.at = binary.LittleEndian.Uint32(b[32:])
	n.idx = int32(binary.LittleEndian.Uint32(b[36:]))
	n.author = int32(binary.LittleEndian.Uint32(b[40:]))
	n.root = int32(binary.LittleEndian.Uint32(b[44:]))
}

// noteCount is the number of notes so far.
func (g *generator) noteCount() int { return g.notes.n }

// note j (a failed read leaves g.err set, which next returns).
func (g *generator) noteRec(j int) noteRec {
	var n noteRec
	if err := g.notes.read(j, g.nrec[:]); err != nil {
		if g.err == nil {
			g.err = fmt.Errorf("corpus: reading back note %d: %w", j, err)
		}
		return n
	}
	n.get(g.nrec[:])
	return n
}

// addNote appends the next note.
func (g *generator) addNote(n noteRec) error {
	b, err := g.notes.next()
	if err != nil {
		return err
	}
	n.put(b)
	return nil
}

// genBatch is batchSize consecutive events on their way from the producer
// to the signers to the writer.
type genBatch struct {
	b, lo, n int
	evs      [batchSize]*nostr.Event
	slab     [batchSize]nostr.Event // the events when they are not kept
	ids      [batchSize][32]byte
	author   [batchSize]int32
	ser      [batchSize][]byte   // serialization until signed
	serAt    [batchSize][2]int32 // where its tags and content start
	arena    []byte              // the serializations
	wire     []byte              // the wire JSON once signed
	offs     [batchSize + 1]int
}

func newGenerator(p Params, authors []Author, keys []*secp.Key, signer secp.Signer, keep bool, out *fileWriter, tmp string) *generator {
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
		keep:        keep,
		out:         out,
		lastReplace: map[int64]int64{},
		wake:        make(chan struct{}),
		notes:       newSpillTable(noteRecSize, noteChunk, spillKeep, tmp),
	}
	if keep {
		g.events = make([]*nostr.Event, n)
		g.slab = make([]nostr.Event, n)
		g.raw = make([][]byte, n)
		for i := range g.events {
			g.events[i] = &g.slab[i]
		}
	}
	return g
}

// run generates every event, signs them with nw workers and writes them in
// order.
func (g *generator) run(ctx context.Context, nw int, progress func(done, total int)) error {
	ictx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	jobs := make(chan *genBatch, 4)
	signed := make(chan *genBatch, nw)
	var wg sync.WaitGroup
	var mu sync.Mutex
	nsigned := 0
	for range nw {
		wg.Go(func() {
			for b := range jobs {
				if ictx.Err() != nil {
					continue
				}
				if err := g.signBatch(b); err != nil {
					cancel(err)
					continue
				}
				n := b.n // b is the writer's once sent
				signed <- b
				if progress != nil {
					mu.Lock()
					nsigned += n
					progress(nsigned, g.p.Events)
					mu.Unlock()
				}
			}
		})
	}
	wrote := make(chan error, 1)
	go func() { wrote <- g.write(signed) }()
	err := g.produce(ictx, jobs)
	close(jobs)
	wg.Wait()
	close(signed)
	if werr := <-wrote; werr != nil && err == nil {
		err = werr
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if cause := context.Cause(ictx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

// write takes the signed batches (in any order) and writes them in order.
func (g *generator) write(signed <-chan *genBatch) error {
	pending := map[int]*genBatch{}
	var err error
	for b := range signed {
		pending[b.b] = b
		for {
			b, ok := pending[g.written]
			if !ok {
				break
			}
			delete(pending, b.b)
			for k := range b.n {
				raw := b.wire[b.offs[k]:b.offs[k+1]:b.offs[k+1]]
				g.bytes += int64(len(raw))
				if g.keep {
					g.raw[b.lo+k] = raw
				}
				if g.out != nil {
					g.out.add(raw)
				}
			}
			if g.out != nil && err == nil {
				err = g.out.flush()
			}
			if g.keep {
				b.wire = nil // the kept Raw slices it
			}
			g.batches.Put(b)
			g.mu.Lock()
			g.written++
			if g.out != nil {
				g.wEvents, g.wPos = g.out.count, g.out.pos
			}
			close(g.wake)
			g.wake = make(chan struct{})
			g.mu.Unlock()
		}
	}
	return err
}

// waitWritten waits until batch b is written.
func (g *generator) waitWritten(ctx context.Context, b int) error {
	for {
		g.mu.Lock()
		done, wake := g.written > b, g.wake
		g.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// rawOf is the wire JSON of event j, once its batch is written.
func (g *generator) rawOf(j int) ([]byte, error) {
	if g.keep {
		return g.raw[j], nil
	}
	g.mu.Lock()
	count, pos := g.wEvents, g.wPos
	g.mu.Unlock()
	return g.out.readRaw(j, count, pos)
}

// produce builds events in order and queues each full batch.
func (g *generator) produce(ctx context.Context, jobs chan<- *genBatch) error {
	send := func(b *genBatch) error {
		select {
		case jobs <- b:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	for i := range g.p.Events {
		if i%batchSize == 0 {
			if i > 0 {
				if err := send(g.cur); err != nil {
					return err
				}
			}
			g.newBatch(i)
		}
		if err := g.next(ctx, i); err != nil {
			return err
		}
	}
	return send(g.cur)
}

// newBatch starts the batch of events from lo.
func (g *generator) newBatch(lo int) {
	b, _ := g.batches.Get().(*genBatch)
	if b == nil {
		b = &genBatch{arena: make([]byte, 0, batchSize*(2*g.p.AvgSize+600))}
	}
	b.b, b.lo, b.n = lo/batchSize, lo, min(batchSize, g.p.Events-lo)
	b.arena = b.arena[:0]
	for k := range b.n {
		if g.keep {
			b.evs[k] = g.events[lo+k]
		} else {
			b.slab[k] = nostr.Event{}
			b.evs[k] = &b.slab[k]
		}
	}
	g.cur = b
}

// signBatch signs batch b and builds its wire JSON.
func (g *generator) signBatch(b *genBatch) error {
	size := 0
	for k := range b.n {
		size += 300 + len(b.ser[k])
	}
	buf := b.wire[:0]
	if cap(buf) < size {
		buf = make([]byte, 0, size)
	}
	for k := range b.n {
		e := b.evs[k]
		aux := b.ids[k]
		for j := range aux {
			aux[j] ^= g.auxMask[j]
		}
		sig, err := g.signer.SignKey(g.keys[b.author[k]], &b.ids[k], &aux)
		if err != nil {
			return fmt.Errorf("corpus: signing event %d: %w", b.lo+k, err)
		}
		e.Sig = hex.EncodeToString(sig[:])
		buf = appendWire(buf, e, b.ser[k], int(b.serAt[k][0]), int(b.serAt[k][1]))
		b.ser[k] = nil
		b.offs[k+1] = len(buf)
	}
	b.offs[0] = 0
	b.wire = buf
	return nil
}

// next builds event i: author, kind, created_at, tags, content and id.
func (g *generator) next(ctx context.Context, i int) error {
	p := &g.p
	rng := g.rng
	b := g.cur
	k := i - b.lo
	e := b.evs[k]
	a := int(g.authorZipf.Uint64())
	e.PubKey = g.authors[a].PubKey
	b.author[k] = int32(a)

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
	if (kind == 6 || kind == 7) && g.noteCount() == 0 || kind == 3 && len(g.authors) < 2 {
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
	root := int32(-1)
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
		c, tags, t, root = g.note(c, e, size, t)
		if len(tags) > 0 {
			c = appendHashtags(c, tags, size)
		}
	case 7:
		n := g.noteRec(g.pickNote(g.noteCount()))
		t = max(t, g.noteAt(&n))
		r := reactions[rng.IntN(len(reactions))]
		c = append(c, r...)
		e.Tags = []nostr.Tag{{"e", hex.EncodeToString(n.id[:])}, {"p", g.authors[n.author].PubKey}, {"k", "1"}}
		if r[0] == ':' {
			name := r[1 : len(r)-1]
			e.Tags = append(e.Tags, nostr.Tag{"emoji", name, "https://example.com/emoji/" + name + ".gif"})
		}
	case 6:
		// The notes written at least repostLag batches back. Notes before
		// the last (repostLag+1)·batchSize have event indexes below the
		// bound (indexes are distinct and below i): only those are searched.
		nn := g.noteCount()
		lo := max(0, nn-(repostLag+1)*batchSize)
		eligible := lo + sort.Search(nn-lo, func(k int) bool {
			return int(g.noteRec(lo+k).idx) >= (i/batchSize-repostLag)*batchSize
		})
		var n noteRec
		if eligible > 0 && p.AvgSize >= 256 && rng.IntN(10) < 8 {
			n = g.noteRec(g.pickNote(eligible))
			j := int(n.idx)
			if err := g.waitWritten(ctx, j/batchSize); err != nil {
				return err
			}
			raw, err := g.rawOf(j)
			if err != nil {
				return fmt.Errorf("corpus: reading back event %d: %w", j, err)
			}
			c = append(c, raw...)
		} else {
			n = g.noteRec(g.pickNote(nn))
		}
		t = max(t, g.noteAt(&n))
		e.Tags = []nostr.Tag{{"e", hex.EncodeToString(n.id[:]), "wss://relay.example.com"}, {"p", g.authors[n.author].PubKey}}
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

	// Serialize into the batch arena: the id is its hash, and the signing
	// worker reuses its escaped tags and content for the wire JSON.
	start := len(b.arena)
	var tagsAt, contentAt int
	b.arena, tagsAt, contentAt = e.AppendSerializedAt(b.arena)
	b.ser[k] = b.arena[start:len(b.arena):len(b.arena)]
	b.serAt[k] = [2]int32{int32(tagsAt), int32(contentAt)}
	b.ids[k] = sha256.Sum256(b.ser[k])
	e.ID = hex.EncodeToString(b.ids[k][:])
	if kind == 1 {
		if err := g.addNote(noteRec{id: b.ids[k], at: uint32(t - p.windowStart()), idx: int32(i), author: int32(a), root: root}); err != nil {
			return err
		}
	}
	return g.err
}

// noteAt is a note's created_at.
func (g *generator) noteAt(n *noteRec) int64 { return g.p.windowStart() + int64(n.at) }

// pickNote picks one of the first n notes, favouring recent ones, and
// returns its note number.
func (g *generator) pickNote(n int) int {
	return n - 1 - skewed(g.rng.Uint64(), n)
}

// pickAuthor picks an author with the corpus's skewed popularity.
func (g *generator) pickAuthor() int { return int(g.authorZipf.Uint64()) }

// note builds a kind-1 note e of size content bytes with its tags: replies
// (e root/reply markers and p), mentions, and t tags on about 40% of notes.
// It returns the hashtags to write into the content and the note number of
// its thread's root (-1: it starts one).
func (g *generator) note(c []byte, e *nostr.Event, size int, t int64) ([]byte, []string, int64, int32) {
	rng := g.rng
	root := int32(-1)
	r := rng.Uint64()
	if r%100 < 25 && g.noteCount() > 0 {
		j := g.pickNote(g.noteCount())
		target := g.noteRec(j)
		t = max(t, g.noteAt(&target))
		if target.root < 0 {
			root = int32(j)
			e.Tags = append(e.Tags, nostr.Tag{"e", hex.EncodeToString(target.id[:]), "", "root"})
		} else {
			root = target.root
			rootRec := g.noteRec(int(root))
			e.Tags = append(e.Tags, nostr.Tag{"e", hex.EncodeToString(rootRec.id[:]), "", "root"},
				nostr.Tag{"e", hex.EncodeToString(target.id[:]), "", "reply"})
		}
		e.Tags = append(e.Tags, nostr.Tag{"p", g.authors[target.author].PubKey})
	}
	if (r>>8)%100 < 12 {
		e.Tags = append(e.Tags, nostr.Tag{"p", g.authors[g.pickAuthor()].PubKey})
	}
	var tags []string
	if (r>>16)%100 < 40 {
		n := 1 + int((r>>24)%3)
		for range n {
			h := hashtags[g.tagZipf.Uint64()]
			if !slices.Contains(tags, h) {
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
	return appendContent(c, rng, size-room), tags, t, root
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
