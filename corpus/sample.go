package corpus

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/relaybench/relaybench/nostr"
)

// SampleDump builds a small real-shaped dump for tests and demonstrations,
// made by relaybench itself (no third-party data): the events of the
// generated corpus for p in a shuffled order, plus, signed by its authors,
// one event of each kind preparation drops (ephemeral, deletion, expiring)
// and one of each defect (bad id, bad signature, an exact duplicate, a
// line that is not an event). It returns the lines, the drops LoadDump
// must count and the generated corpus, whose events it must keep.
func SampleDump(ctx context.Context, p Params, o Options) (lines [][]byte, drops map[string]int, gen *Corpus, err error) {
	c, err := Generate(ctx, p, o)
	if err == nil {
		err = c.Materialize() // a big one is streamed
	}
	if err != nil {
		return nil, nil, nil, err
	}
	at := c.Params.Anchor - 60
	extra := []*nostr.Event{
		{CreatedAt: at, Kind: 20001, Tags: []nostr.Tag{}, Content: "ephemeral"},
		{CreatedAt: at, Kind: 5, Tags: []nostr.Tag{{"e", c.Events[0].ID}}, Content: "deleted"},
		{CreatedAt: at, Kind: 1, Tags: []nostr.Tag{{"expiration", fmt.Sprint(at + 3600)}}, Content: "expiring"},
		{CreatedAt: at, Kind: 1, Tags: []nostr.Tag{}, Content: "its content is changed after signing"},
		{CreatedAt: at, Kind: 1, Tags: []nostr.Tag{}, Content: "its signature is damaged after signing"},
	}
	keys := []*Author{c.Author(0), c.Author(1), c.Author(2), c.Author(3), c.Author(4)}
	if err := SignEvents(ctx, extra, keys, o); err != nil {
		return nil, nil, nil, err
	}
	extra[3].Content = "changed"
	sig := []byte(extra[4].Sig)
	if sig[10] == '0' {
		sig[10] = '1'
	} else {
		sig[10] = '0'
	}
	extra[4].Sig = string(sig)

	for _, e := range c.Events {
		lines = append(lines, e.AppendJSON(nil))
	}
	rng := rand.New(rand.NewPCG(uint64(p.Seed), 0x64756d70)) // "dump"
	rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	for _, e := range extra {
		lines = append(lines, e.AppendJSON(nil))
	}
	lines = append(lines, bytes.Clone(lines[len(lines)/2]), []byte(`{"id":"not an event","kind":1}`))
	rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	drops = map[string]int{DropEphemeral: 1, DropDeletion: 1, DropExpiring: 1, DropBadID: 1, DropBadSig: 1, DropDuplicate: 1, DropMalformed: 1}
	return lines, drops, c, nil
}

// WriteLines writes dump lines to path: NDJSON, or a JSON array when the
// name (without ".gz") ends in ".json"; gzip when it ends in ".gz".
func WriteLines(path string, lines [][]byte) error {
	var b bytes.Buffer
	name := strings.TrimSuffix(path, ".gz")
	array := strings.HasSuffix(name, ".json")
	if array {
		b.WriteString("[\n")
	}
	for i, l := range lines {
		b.Write(l)
		if array && i < len(lines)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	if array {
		b.WriteString("]\n")
	}
	data := b.Bytes()
	if name != path {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(data)
		if err := zw.Close(); err != nil {
			return err
		}
		data = z.Bytes()
	}
	return os.WriteFile(path, data, 0o644)
}
