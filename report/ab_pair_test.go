package report

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/threshold"
)

// sideOf is f with only the runs of the relay named name.
func sideOf(f *results.File, name string) *results.File {
	g := *f
	g.Runs = nil
	for _, r := range f.Runs {
		if r.Relay.Name == name {
			g.Runs = append(g.Runs, r)
		}
	}
	return &g
}

// One relay on each side, named differently (a store change:
// khatru-native vs khatru-badger): A/B pairs the two and says so, in the
// terminal and in the HTML.
func TestABPairsTheOnlyRelays(t *testing.T) {
	f := compareFile(2, 1)
	base, cand := []*results.File{sideOf(f, "khatru-badger")}, []*results.File{sideOf(f, "strfry")}
	if err := Pairable(base, cand); err != nil {
		t.Fatalf("Pairable: %v", err)
	}
	want := "Paired khatru-badger (baseline) with strfry (candidate): the only relay on each side."
	var txt, h strings.Builder
	if err := Compare(&txt, base, cand, "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt.String(), want) || !strings.Contains(txt.String(), "Relay khatru-badger (baseline) vs strfry (candidate):") {
		t.Errorf("text: want %q and the paired table:\n%s", want, txt.String())
	}
	if err := CompareHTML(&h, base, cand, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.String(), want) {
		t.Errorf("html: want %q", want)
	}
}

// Several relays and none in both sides: refused before any work, naming
// both sides' relays and how A/B pairs them.
func TestABUnpairedNamesBothSides(t *testing.T) {
	base := compareFile(0, 1)
	cand := compareFile(0, 1)
	for i := range cand.Runs {
		cand.Runs[i].Relay.Name += "-new"
	}
	err := Pairable([]*results.File{base}, []*results.File{cand})
	if err == nil {
		t.Fatal("Pairable: want an error")
	}
	for _, w := range []string{"baseline (khatru-badger, strfry)", "candidate (khatru-badger-new, strfry-new)", "pairs runs by relay name"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q: want %q in it", err, w)
		}
	}
	if err := Pairable([]*results.File{base}, []*results.File{base}); err != nil {
		t.Errorf("same relays: %v", err)
	}
}

// --fail-on pairs relays as the comparison does: the only relay of each
// side, named differently (a store change), is judged as "BASE vs CAND"
// (a limit's {relay=NAME} may name either), where it judged nothing and
// passed; too few runs there is the same error as for one relay by name.
func TestFailOnPairsTheOnlyRelays(t *testing.T) {
	fo := func(s string) []threshold.FailOn {
		f, err := threshold.ParseFailOn(s)
		if err != nil {
			t.Fatal(err)
		}
		return []threshold.FailOn{f}
	}
	base := []*results.File{gateFile("khatru-native", 1000, 1010, 990, 1005, 995)}
	slower := []*results.File{gateFile("khatru-badger", 800, 810, 790, 805, 795)}
	for _, expr := range []string{"publish.rate:-10%", "publish.rate{relay=khatru-badger}:-10%"} {
		rs := CheckFailOn(base, slower, fo(expr))
		if len(rs) != 1 || rs[0].Error != "" || !rs[0].Failed || rs[0].Relay != "khatru-native vs khatru-badger" {
			t.Errorf("%s: %+v", expr, rs)
		}
	}
	rs := CheckFailOn([]*results.File{gateFile("khatru-native", 1000)}, []*results.File{gateFile("khatru-badger", 800)}, fo("publish.rate:-10%"))
	if len(rs) != 1 || !strings.Contains(rs[0].Error, "1+1 runs can never show a significant change") {
		t.Errorf("1+1 runs: %+v", rs)
	}
	two := gateFile("a", 1000, 1000, 1000, 1000)
	two.Runs = append(two.Runs, gateFile("b", 1000, 1000, 1000, 1000).Runs...)
	other := gateFile("c", 900, 900, 900, 900)
	other.Runs = append(other.Runs, gateFile("d", 900, 900, 900, 900).Runs...)
	rs = CheckFailOn([]*results.File{two}, []*results.File{other}, fo("publish.rate:-10%"))
	if len(rs) != 1 || rs[0].Error == "" {
		t.Errorf("no relay to judge: a limit that judged nothing must not pass: %+v", rs)
	}
}
