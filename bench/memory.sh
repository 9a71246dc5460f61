#!/usr/bin/env bash
# Client memory against run length: peak RSS (/usr/bin/time -v) of
# `run --mode pipeline --skip-query` against the sink relay (a separate
# process) for several corpus sizes, and of one open-loop `load` above the
# old 2,000,000-event cap. Appends the table to bench/RESULTS.md with the
# machine, date and commit.
#
#   bench/memory.sh                       # 1 M, 5 M and 10 M events
#   COUNTS="200000 1000000" bench/memory.sh
#   LOAD_RATE=0 bench/memory.sh           # no load row
#   SIGN_ONLY=1 bench/memory.sh           # only signing: `relaybench corpus` per size
#   RESULTS=/tmp/x.md bench/memory.sh     # append the section there instead
#
# Each size is signed once (its first run, reported apart: signing
# included) and then published from the cache (the figure). Corpora take
# about 1.56 GB per million 1 KB events on disk, signing about 40 s per
# million on 2 cores with libsecp256k1; each is deleted after its runs
# unless KEEP_CACHE=1 (CACHE=DIR to reuse one).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
COUNTS=${COUNTS:-"1000000 5000000 10000000"}
LOAD_RATE=${LOAD_RATE:-50000}
LOAD_SECS=${LOAD_SECS:-50}
# a fixed created_at window, so that a cached corpus is found again after the hour turns
ANCHOR=${ANCHOR:-2026-01-01T00:00:00Z}
bench_work
CACHE=${CACHE:-$work/cache}
# peak KB, wall time and exit status from a /usr/bin/time -v log
peak() { sed -n 's/.*Maximum resident set size (kbytes): //p' "$1"; }
wall() { sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$1"; }
RESULTS=${RESULTS:-bench/RESULTS.md}
machine() {
  echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GB, $(uname -sr), $(go version | cut -d' ' -f3), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
}

if [ "${SIGN_ONLY:-0}" = 1 ]; then
  # Signing alone: `relaybench corpus` generates, signs and writes each
  # corpus to the cache (then describes it, one event at a time).
  rows=()
  for n in $COUNTS; do
    echo "== $n events: sign" >&2
    /usr/bin/time -v "$rb" corpus --events "$n" --anchor "$ANCHOR" --cache-dir "$CACHE" --no-progress >"$work/$n-corpus.out" 2>"$work/$n-corpus.time" ||
      { tail -5 "$work/$n-corpus.time" >&2; exit 1; }
    key=$(sed -n 's/^Corpus //p' "$work/$n-corpus.out")
    rate=$(sed -n 's/.*in \([0-9.]*\)s: \([0-9]*\) events\/s.*/\1 s, \2/p' "$work/$n-corpus.out")
    [ -n "$rate" ] || rate="(was cached)"
    p=$(peak "$work/$n-corpus.time")
    rows+=("| $(printf "%'d" "$n") | $((p / 1024)) MB | $(awk -v p="$p" -v n="$n" 'BEGIN{printf "%.1f", p*1024/n}') B | $rate | $(wall "$work/$n-corpus.time") |")
    echo "${rows[-1]}" >&2
    [ "${KEEP_CACHE:-0}" = 1 ] || rm -f "$CACHE/corpus-$key.wire"
  done
  {
    echo
    echo "## Signing memory · $(date -u +%Y-%m-%dT%H:%MZ) · commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo '-dirty')"
    echo
    machine
    echo
    echo "\`relaybench corpus --events N\` (1 KB average content, into an empty cache): peak RSS (/usr/bin/time -v) of generating, signing and writing the corpus file, then describing it:"
    echo
    echo "| events | peak RSS | per event | signing time, events/s | wall |"
    echo "|---:|---:|---:|---:|---:|"
    printf '%s\n' "${rows[@]}"
  } | tee -a "$RESULTS"
  exit 0
fi

bench_sink

# accepted and events/s of the first phase of a results file
figures() {
  python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["runs"][0]["phases"][-1]; r=p["rates"]; print(p["counts"]["accepted"], round(r.get("events_per_sec", r.get("accepted_per_sec", 0))))' "$1"
}

# the corpus key of a results file, whether it was read from the cache, and its signing seconds
corpusof() {
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["runs"][0]["corpus"]; print(c["key"], c.get("cached", False), round(c.get("sign_secs", 0)))' "$1"
}

rows=()
for n in $COUNTS; do
  for pass in sign publish; do
    echo "== $n events: $pass run" >&2
    /usr/bin/time -v "$rb" run --relay "$url" --events "$n" --concurrency 8 --mode pipeline --window 128 --skip-query \
      --anchor "$ANCHOR" --cache-dir "$CACHE" --no-progress --quiet --json "$work/$n-$pass.json" 2>"$work/$n-$pass.time" >&2 ||
      { tail -5 "$work/$n-$pass.time" >&2; exit 1; }
  done
  read -r acc rate < <(figures "$work/$n-publish.json")
  read -r key cached secs < <(corpusof "$work/$n-sign.json")
  p1=$(peak "$work/$n-sign.time"); p2=$(peak "$work/$n-publish.time")
  first="$((p1 / 1024)) MB"
  if [ "$cached" = True ]; then first="$first (was cached)"; else first="$first (signed in $secs s)"; fi
  rows+=("| $(printf "%'d" "$n") | $((p2 / 1024)) MB | $(awk -v p="$p2" -v n="$n" 'BEGIN{printf "%.1f", p*1024/n}') B | $first | $(printf "%'d" "$acc") | $(printf "%'d" "$rate") | $(wall "$work/$n-publish.time") |")
  echo "${rows[-1]}" >&2
  [ "${KEEP_CACHE:-0}" = 1 ] || rm -f "$CACHE/corpus-$key.wire"
done

loadrow=""
if [ "$LOAD_RATE" != 0 ]; then
  n=$((LOAD_RATE * LOAD_SECS))
  echo "== load: $n events at $LOAD_RATE/s" >&2
  /usr/bin/time -v "$rb" load --relay "$url" --load-pattern constant --load-base "$LOAD_RATE" --load-duration "${LOAD_SECS}s" \
    --load-pool 256 --quiet --no-progress --json "$work/load.json" 2>"$work/load.time" >&2 ||
    { tail -5 "$work/load.time" >&2; exit 1; }
  read -r acc rate < <(figures "$work/load.json")
  p=$(peak "$work/load.time")
  loadrow="Open-loop \`load\`, constant $(printf "%'d" "$LOAD_RATE")/s for ${LOAD_SECS} s ($(printf "%'d" "$n") distinct events, above the old 2,000,000 cap): peak RSS $((p / 1024)) MB (signing included), $(printf "%'d" "$acc") accepted, wall $(wall "$work/load.time")."
  echo "$loadrow" >&2
fi

{
  echo
  echo "## Client memory against run length · $(date -u +%Y-%m-%dT%H:%MZ) · commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo '-dirty')"
  echo
  machine
  echo
  echo "\`run --mode pipeline --window 128 --concurrency 8 --skip-query\` against the sink relay (separate process), 1 KB average content, corpus streamed from its cache file; peak RSS of the relaybench process (/usr/bin/time -v, file-backed pages included):"
  echo
  echo "| events | peak RSS, publish from cache | per event | peak RSS, first run (signing) | accepted | events/s | wall |"
  echo "|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
  [ -z "$loadrow" ] || { echo; echo "$loadrow"; }
} | tee -a "$RESULTS"
