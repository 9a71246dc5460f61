package main

import (
	"fmt"
	"os"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/relaybench/relaybench/internal/progress"
)

type corpusCmd struct {
	corpusFlags
	NoProgress bool `name:"no-progress" help:"No progress display."`
}

func init() {
	register("corpus", "Sign (or load from the cache) the corpus for these parameters and describe it: kinds, sizes, signing rate.", &corpusCmd{})
}

// checkFlags checks the corpus flags before anything is signed (see flags.go).
func (c *corpusCmd) checkFlags() error { return c.corpusFlags.validate() }

func (c *corpusCmd) Run(g *Globals) error {
	prog := progress.New(os.Stderr, !c.NoProgress)
	start := time.Now()
	crp, err := loadCorpus(g.Ctx, c.corpusFlags, prog)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	kinds := map[int]int{}
	var content, tags int
	for _, e := range crp.Events {
		kinds[e.Kind]++
		content += len(e.Content)
		tags += len(e.Tags)
	}
	n := len(crp.Events)
	fmt.Printf("Corpus %s\n", crp.Key)
	fmt.Printf("  Events:   %d by %d authors, seed %d, created_at %s … %s\n", n, len(crp.Authors), crp.Params.Seed,
		time.Unix(crp.Params.Anchor-int64(crp.Params.Window/time.Second), 0).UTC().Format(time.RFC3339),
		time.Unix(crp.Params.Anchor, 0).UTC().Format(time.RFC3339))
	fmt.Printf("  Content:  %.0f B average (asked %d), %d tags in all, %.2f MB of wire JSON\n",
		float64(content)/float64(n), crp.Params.AvgSize, tags, float64(crp.Bytes)/1e6)
	ks := make([]int, 0, len(kinds))
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	fmt.Print("  Kinds:   ")
	for _, k := range ks {
		fmt.Printf(" %d: %d (%.1f%%)", k, kinds[k], 100*float64(kinds[k])/float64(n))
	}
	fmt.Println()
	if crp.Cached {
		fmt.Printf("  Loaded from the cache in %s: nothing signed\n", elapsed.Round(time.Millisecond))
	} else {
		secs := crp.SignDuration.Seconds()
		fmt.Printf("  Signed with %s in %.2fs: %.0f events/s (generation, ids and signatures, all cores)\n", crp.Signer, secs, float64(n)/secs)
	}
	if crp.CacheNote != "" {
		fmt.Printf("  Cache: %s\n", crp.CacheNote)
	}
	if n > 0 && !utf8.ValidString(crp.Events[0].Content) {
		return fmt.Errorf("corpus content is not valid UTF-8")
	}
	return nil
}
