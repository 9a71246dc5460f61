package corpus

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/relaybench/relaybench/nostr"
)

// language is a pool of words written one way, with how they are joined
// and how sentences end.
type language struct {
	words []string
	sep   string   // between words
	ends  []string // sentence endings
}

var (
	english = language{sep: " ", ends: []string{".", ".", ".", "!", "?", "...", " 🤙", "!!"}, words: []string{
		"the", "a", "I", "to", "and", "of", "is", "it", "you", "that", "in", "this", "for", "on", "just",
		"nostr", "zap", "relay", "bitcoin", "sats", "note", "client", "keys", "today", "what", "about",
		"with", "have", "be", "not", "are", "was", "but", "my", "so", "like", "we", "do", "all", "can",
		"your", "they", "more", "there", "one", "how", "when", "good", "morning", "gm", "pv", "freedom",
		"protocol", "decentralized", "censorship", "resistant", "lightning", "node", "wallet", "coffee",
		"people", "time", "really", "think", "know", "new", "build", "ship", "code", "open", "source",
		"world", "love", "need", "want", "never", "always", "because", "everyone", "anyone", "here",
		"block", "height", "fee", "market", "price", "chart", "meme", "photo", "music", "podcast",
		"weekend", "tomorrow", "yesterday", "amazing", "great", "thanks", "agree", "exactly", "based",
		"plebs", "hodl", "stack", "signal", "noise", "follow", "reply", "repost", "thread", "post",
		"don't", "C:\\path", "it's", "I'm", "can't", "that's", "what's", "y'all", "(seriously)", "\"quoted\"",
		"'single'", "back\\slash", "e.g.", "etc.", "100%", "$5", "#1", "@you", "&", "<tag>",
	}}
	romance = language{sep: " ", ends: []string{".", "!", "?", "…", "!!"}, words: []string{
		"café", "mañana", "não", "coração", "niño", "señor", "está", "también", "así", "qué", "más",
		"élève", "déjà", "très", "où", "garçon", "façade", "crème", "brûlée", "naïve", "über", "Straße",
		"Zürich", "São", "Paulo", "Bogotá", "München", "für", "schön", "größer", "città", "perché",
		"liberdade", "libertad", "liberté", "bitcóin", "relé", "nostr", "gracias", "obrigado", "merci",
		"danke", "y", "e", "de", "la", "el", "los", "une", "ça", "açaí", "pingüino", "Ærø", "smørrebrød",
	}}
	cjk = language{sep: "", ends: []string{"。", "！", "？", "…", "w"}, words: []string{
		"日本語", "こんにちは", "ありがとう", "今日は", "東京", "ビットコイン", "ノストル", "おはよう",
		"です", "ます", "の", "が", "を", "に", "は", "と", "猫", "寿司", "ラーメン", "桜",
		"你好", "世界", "比特币", "中文", "朋友", "谢谢", "今天", "天气", "很好", "我们",
		"노스트르", "감사합니다", "안녕하세요", "비트코인", "오늘", "친구",
	}}
	arabic = language{sep: " ", ends: []string{".", "؟", "!"}, words: []string{
		"مرحبا", "بالعالم", "شكرا", "بيتكوين", "سلام", "صباح", "الخير", "نوستر", "حرية", "اليوم",
		"في", "من", "على", "هذا", "جميل", "أصدقاء",
	}}
	hebrew = language{sep: " ", ends: []string{".", "!", "?"}, words: []string{
		"שלום", "עולם", "תודה", "ביטקוין", "בוקר", "טוב", "חופש", "היום", "של", "זה", "יפה", "חברים",
	}}
	cyrillic = language{sep: " ", ends: []string{".", "!", "?"}, words: []string{
		"привет", "мир", "спасибо", "биткоин", "свобода", "сегодня", "доброе", "утро", "и", "в", "на",
		"друзья", "Київ", "дякую",
	}}

	// emoji are mostly 4-byte runes, with a few multi-rune sequences.
	emoji = []string{
		"🤙", "🔥", "⚡", "🚀", "😂", "🧡", "💜", "👀", "🙏", "🎉", "🌞", "🐶", "🍕", "🫂", "😅",
		"🥲", "💯", "🤔", "👍🏽", "❤️", "🏔️", "👨‍💻", "🇧🇷", "🇯🇵", "☕", "🌊", "🐸", "🦩",
	}
)

// skewed picks an index in [0, n) favouring small indices (the product of
// two uniforms), from 20 bits of r.
func skewed(r uint64, n int) int {
	a, b := r&0x3ff, (r>>10)&0x3ff
	return int((a * b * uint64(n)) >> 20)
}

// Content returns realistic note text of exactly size bytes (valid UTF-8,
// never a split rune): sentences in several scripts (Latin with accents,
// CJK, Arabic, Hebrew, Cyrillic), emoji, quotes, backslashes and newlines,
// so that JSON escaping is exercised. size ≤ 0 gives "".
func Content(rng *rand.Rand, size int) string {
	if size <= 0 {
		return ""
	}
	return string(appendContent(make([]byte, 0, size), rng, size))
}

// tokens are ready-made phrases of a language (1–4 words, sometimes an
// emoji, each with its separator in front), so that the hot loop does one
// random draw and one append per phrase rather than per word.
type tokens struct {
	phrases [phrasesPerLanguage]string
	ends    []string
}

const phrasesPerLanguage = 1024

var tEnglish, tRomance, tCJK, tArabic, tHebrew, tCyrillic *tokens

func init() {
	// A fixed PRNG: the phrase pools are part of the format (FormatVersion).
	rng := rand.New(rand.NewPCG(1, 2))
	mk := func(l *language) *tokens {
		t := &tokens{ends: l.ends}
		for i := range t.phrases {
			var p []byte
			for range 1 + int(rng.Uint64()%4) {
				r := rng.Uint64()
				if (r>>20)&0xff < 14 {
					p = append(p, ' ')
					p = append(p, emoji[int(r>>28)%len(emoji)]...)
					continue
				}
				p = append(p, l.sep...)
				if r>>63 == 0 { // half the words common ones, half any
					p = append(p, l.words[skewed(r, len(l.words))]...)
				} else {
					p = append(p, l.words[int(r>>32)%len(l.words)]...)
				}
			}
			t.phrases[i] = string(p)
		}
		return t
	}
	tEnglish, tRomance, tCJK = mk(&english), mk(&romance), mk(&cjk)
	tArabic, tHebrew, tCyrillic = mk(&arabic), mk(&hebrew), mk(&cyrillic)
}

// tokensFor maps randomness to a language: mostly English.
func tokensFor(r uint64) *tokens {
	switch v := r % 100; {
	case v < 70:
		return tEnglish
	case v < 81:
		return tRomance
	case v < 89:
		return tCJK
	case v < 93:
		return tArabic
	case v < 96:
		return tHebrew
	default:
		return tCyrillic
	}
}

// appendContent appends exactly size bytes of text to b.
func appendContent(b []byte, rng *rand.Rand, size int) []byte {
	start, end := len(b), len(b)+size
	lang := tokensFor(rng.Uint64())
	left := 1 + int(rng.Uint64()&7) // phrases left in the sentence
	for {
		r := rng.Uint64()
		if left == 0 {
			e := lang.ends[int(r>>40)%len(lang.ends)]
			if len(b)+len(e) > end {
				break
			}
			b = append(b, e...)
			switch (r >> 48) & 15 {
			case 0, 1:
				if len(b) < end {
					b = append(b, '\n')
				}
			case 2:
				if len(b)+2 <= end {
					b = append(b, "\n\n"...)
				}
			}
			lang = tokensFor(r >> 52)
			left = 1 + int((r>>32)&7)
			continue
		}
		left--
		w := lang.phrases[r%phrasesPerLanguage]
		if w[0] == ' ' && (len(b) == start || b[len(b)-1] == '\n') {
			w = w[1:]
		}
		if len(b)+len(w) > end {
			break
		}
		b = append(b, w...)
	}
	return padASCII(b, start, end, rng)
}

var fillers = []string{"ok", "so", "yes", "gm", "ty", "lol", "nice", "wow", "hey", "on", "it", "up", "go", "a", "I"}

// padASCII fills b up to end with short ASCII words (whole runes only);
// text written for this call starts at start.
func padASCII(b []byte, start, end int, rng *rand.Rand) []byte {
	for len(b) < end {
		n := end - len(b)
		if len(b) > start && b[len(b)-1] != ' ' && b[len(b)-1] != '\n' {
			if n == 1 {
				return append(b, '.')
			}
			b = append(b, ' ')
			n--
		}
		w := fillers[rng.Uint64()%uint64(len(fillers))]
		if len(w) > n {
			w = "xxxx"[:n]
		}
		b = append(b, w...)
	}
	return b
}

// logNormalSize draws a size whose distribution is log-normal with mean
// mean and sigma spread, clamped to [lo, hi].
func logNormalSize(rng *rand.Rand, mean float64, spread float64, lo, hi int) int {
	if mean < 1 {
		mean = 1
	}
	mu := math.Log(mean) - spread*spread/2
	v := int(math.Exp(mu + spread*rng.NormFloat64()))
	return max(lo, min(hi, v))
}

// hashtags is the t-tag vocabulary, most popular first.
var hashtags = []string{
	"nostr", "bitcoin", "zap", "grownostr", "plebchain", "art", "photography", "music", "introductions",
	"foodstr", "coffeechain", "memes", "news", "asknostr", "dev", "privacy", "freedom", "ai", "travel",
	"books", "science", "running", "gaming", "linux", "español", "日本", "ビットコイン", "café", "música",
	"açaí", "עברית", "عربي", "русский", "한국어", "中文", "weekend", "gm", "pv", "zapathon", "v4v",
}

// names for profiles: syllables combined per author.
var syllables = []string{"ka", "mo", "ri", "sa", "to", "ne", "lu", "vi", "da", "zen", "ko", "mi", "ra", "jo", "el", "an", "bit", "sat", "no", "str"}

func authorName(i int) string {
	b := make([]byte, 0, 12)
	x := uint64(i)*2654435761 + 17
	for n := 0; n < 2+int(x%3); n++ {
		b = append(b, syllables[x%uint64(len(syllables))]...)
		x /= uint64(len(syllables))
		x += uint64(n + i)
	}
	return string(b)
}

// appendProfile appends kind-0 metadata JSON for author i with an "about"
// of about aboutSize bytes (escaped as JSON inside the content string).
func appendProfile(b []byte, rng *rand.Rand, i int, pub string, aboutSize int) []byte {
	name := authorName(i)
	r := rng.Uint64()
	b = append(b, `{"name":`...)
	b = nostr.AppendJSONString(b, name)
	b = append(b, `,"display_name":`...)
	disp := name
	switch r % 6 {
	case 0:
		disp = name + " 🌸"
	case 1:
		disp = "Señor " + name
	case 2:
		disp = name + " ⚡️ \"the pleb\""
	}
	b = nostr.AppendJSONString(b, disp)
	b = append(b, `,"about":`...)
	b = nostr.AppendJSONString(b, string(appendContent(nil, rng, aboutSize)))
	b = append(b, `,"picture":"https://robohash.org/`...)
	b = append(b, pub[:16]...)
	b = append(b, `.png"`...)
	if r&8 != 0 {
		b = append(b, `,"banner":"https://image.example.com/banner/`...)
		b = append(b, pub[16:32]...)
		b = append(b, `.jpg"`...)
	}
	if r&16 != 0 {
		b = append(b, `,"nip05":"`...)
		b = append(b, name...)
		b = append(b, `@example.com"`...)
	}
	if r&32 != 0 {
		b = append(b, `,"lud16":"`...)
		b = append(b, name...)
		b = append(b, `@getalby.com"`...)
	}
	if r&64 != 0 {
		b = append(b, `,"website":"https://`...)
		b = append(b, name...)
		b = append(b, `.example.org"`...)
	}
	return append(b, '}')
}

// relayList is the legacy kind-3 content some clients still write.
const relayList = `{"wss://relay.damus.io":{"read":true,"write":true},"wss://nos.lol":{"read":true,"write":true},"wss://relay.nostr.band":{"read":true,"write":false},"wss://nostr.wine":{"read":true,"write":true}}`

// reactions are kind-7 contents, most common first; ":" marks a custom
// emoji shortcode that needs an emoji tag.
var reactions = []string{"+", "+", "+", "+", "+", "+", "🤙", "🤙", "❤️", "🔥", "😂", "🫂", "-", "⚡", "💜", ":catJAM:", ":soapbox:"}

// appendLongForm appends a markdown article of exactly size bytes.
func appendLongForm(b []byte, rng *rand.Rand, title string, size int) []byte {
	end := len(b) + size
	b = append(b, "# "...)
	b = append(b, title...)
	b = append(b, "\n\n"...)
	if len(b) > end { // title longer than the article: plain text instead
		b = b[:end-size]
		return appendContent(b, rng, size)
	}
	for sec := 0; len(b) < end; sec++ {
		left := end - len(b)
		para := min(left, 200+int(rng.Uint64()%600))
		if sec > 0 && sec%3 == 0 {
			hdr := strconv.AppendInt([]byte("## Part "), int64(sec/3+1), 10)
			hdr = append(hdr, "\n\n- **note:** see [link](https://example.com/a)\n\n"...)
			if len(hdr) < left {
				b = append(b, hdr...)
				continue
			}
		}
		b = appendContent(b, rng, para)
		if end-len(b) >= 2 {
			b = append(b, "\n\n"...)
		}
	}
	return b
}
