#!/usr/bin/env bash
# Measures relaybench against the fastest peer tool, nostr-bench (PEER=PATH
# names it; built from
# github.com/privkeyio/nostr-bench), on three grounds in one run, and appends
# every figure to bench/RESULTS.md with the machine, load, date and commit:
#   khatru  bench/khatrusink: khatru v0.19.1 as it comes (fasthttp/websocket,
#           JSON parsing, id and signature checks, an OK per event) over a
#           store that keeps nothing, a separate process: ground neither tool
#           wrote;
#   strfry  $BIN_DIR/strfry (BIN_DIR=DIR names your build's folder) with a fresh
#           database for every run (so no event is a duplicate);
#   sink    relaybench's own sink (relay serve --store sink), for reference.
# On each ground PAIRS alternating pairs: nostr-bench (-w CONNS --rate 0
# --only-peak), then relaybench run --mode wait --skip-query --concurrency
# CONNS: one connection per worker, one EVENT in flight each, every OK
# awaited and matched by id.
#
# The same events for both: nostr-bench sends kind-1 events with no tags,
# ~645-byte EVENT messages, and cannot read a dump; relaybench gets a kind-1
# corpus of the same average size: `corpus --export` (content --size SIZE),
# only its kind-1 lines, read back with --corpus (signed, verified and cached
# before any timed phase).
#
# Client CPU, system calls and context switches: perf stat's 100 ms intervals
# around each tool's process, counting only its publish phase (the run of
# consecutive intervals as long as the tool's own publish time that holds the
# most socket writes: both write each EVENT with one system call), the same
# way for both tools (both sign before their clock starts). Relay CPU and context
# switches: /proc/PID (every thread) before and after each tool's process.
# Every parsed number is checked (present, numeric, the run's count, the rate
# against count / duration); a figure that does not check out stops the
# script with the tool's raw output.
#
# Environment: GROUNDS ("khatru strfry sink"), PAIRS (3), CONNS (4),
# EVENTS (100000, per run on khatru and the sink), STRFRY_EVENTS (20000),
# SIZE (204), OUT (bench/RESULTS.md), PEER (nostr-bench; default: the one on
# PATH), BIN_DIR (strfry's folder; default: the strfry on PATH), RELAY_ENV (environment
# for the Go relays, e.g. GOMAXPROCS=1), RB_ENV (the same for relaybench);
# TOOLS ("nb rb": each pair runs these in this order, ratios are to the
# first), where rbB is a second relaybench for A/B runs: binary RB_B,
# environment RB_B_ENV, and floor is bench/floor -dump (the same signed
# events, one blocked thread per connection; FLOOR_FLAGS=-epoll for one
# epoll thread): the machine's wait-for-OK floor on that ground.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
# PEER names nostr-bench (needed when TOOLS has nb); without it, nostr-bench
# on PATH. No other folder is looked in.
peer_get="build it from https://github.com/privkeyio/nostr-bench (Zig, ReleaseFast), then run PEER=PATH bench/peers.sh or put it on PATH"
case " ${TOOLS:-nb rb} " in
  *" nb "*)
    if [ -z "${PEER:-}" ]; then
      PEER=$(command -v nostr-bench) || {
        echo "bench/peers.sh: skipped, nothing measured: needs nostr-bench (no PEER, none on PATH): $peer_get, or set TOOLS without nb" >&2
        exit 1
      }
    fi
    if [ ! -x "$PEER" ]; then
      echo "bench/peers.sh: skipped, nothing measured: PEER=$PEER is not an executable nostr-bench: $peer_get" >&2
      exit 1
    fi
    ;;
esac
GROUNDS=${GROUNDS:-khatru strfry sink}
CONNS=${CONNS:-4}
EVENTS=${EVENTS:-100000}
STRFRY_EVENTS=${STRFRY_EVENTS:-20000}
PAIRS=${PAIRS:-3}
SIZE=${SIZE:-204}
OUT=${OUT:-bench/RESULTS.md}
RELAY_ENV=${RELAY_ENV:-}
RB_ENV=${RB_ENV:-}
TOOLS=${TOOLS:-nb rb}
RB_B=${RB_B:-}
RB_B_ENV=${RB_B_ENV:-}
RB_B_DESC=${RB_B_DESC:-$RB_B}
FLOOR_FLAGS=${FLOOR_FLAGS:-}
case " $TOOLS " in *" rbB "*) [ -x "$RB_B" ] || { echo "bench/peers.sh: TOOLS has rbB: set RB_B to a relaybench binary" >&2; exit 1; } ;; esac
case " $GROUNDS " in
  *" strfry "*) bench_need_strfry bench/peers.sh ", or set GROUNDS without strfry" ;;
esac
command -v python3 >/dev/null || { echo "bench/peers.sh: needs python3 to check the figures" >&2; exit 1; }
haveperf=""
if command -v perf >/dev/null && perf stat -e raw_syscalls:sys_enter -o /dev/null true 2>/dev/null; then
  haveperf=1
else
  echo "bench/peers.sh: no usable perf: client CPU, system calls and context switches print as –" >&2
fi
bench_work
go build -o "$work/khatrusink" ./bench/khatrusink
go build -o "$work/floor" ./bench/floor
load0=$(cut -d' ' -f1-3 /proc/loadavg)

fail() { # fail WHAT FILE: stop with the raw output that did not check out
  echo "bench/peers.sh: $1; raw output ($2):" >&2
  cat "$2" >&2 || true
  exit 1
}

# kind1 N: a kind-1 dump of N events in $work/k1-N.ndjson, verified and cached.
kind1() {
  local n=$1 all=$work/all-$1.ndjson
  "$rb" corpus --events $((n * 3 / 2 + 1000)) --size "$SIZE" --cache-dir "$work/cache" --no-progress \
    --export "$all" >"$work/corpus-$n.out" 2>&1 || fail "corpus --export failed" "$work/corpus-$n.out"
  grep -F '"kind":1,' "$all" | head -n "$n" >"$work/k1-$n.ndjson" || true
  rm -f "$all"
  [ "$(wc -l <"$work/k1-$n.ndjson")" -eq "$n" ] || fail "fewer than $n kind-1 events in the export" "$work/corpus-$n.out"
  "$rb" corpus --corpus "$work/k1-$n.ndjson" --cache-dir "$work/cache" --no-progress >"$work/k1-$n.out" 2>&1 ||
    fail "the kind-1 dump did not load" "$work/k1-$n.out"
}

start_relay() { # start_relay GROUND: the relay as $relaypid, its URL as $url
  case $1 in
    khatru) env $RELAY_ENV "$work/khatrusink" >"$work/relay.out" 2>"$work/relay.err" & relaypid=$! ;;
    sink) env $RELAY_ENV "$rb" relay serve --store sink >"$work/relay.out" 2>"$work/relay.err" & relaypid=$! ;;
    strfry) bench_strfry_start 7792; url="ws://127.0.0.1:7792"; return ;;
  esac
  for _ in $(seq 100); do grep -q '^listening ' "$work/relay.out" && break; sleep 0.1; done
  url=$(sed -n 's/^listening //p' "$work/relay.out")
  [ -n "$url" ] || fail "the $1 relay did not start" "$work/relay.err"
}

# relay_stat: "cpu_ticks ctxsw" of $relaypid, every thread.
relay_stat() {
  local t=0 c=0 f
  read -r t < <(awk '{ print $14 + $15 }' "/proc/$relaypid/stat")
  for f in /proc/"$relaypid"/task/*/status; do
    c=$((c + $(awk '/ctxt_switches/ { s += $2 } END { print s + 0 }' "$f" 2>/dev/null || echo 0)))
  done
  echo "$t $c"
}

measure() { # measure TAG CMD...: CMD under perf stat intervals into $work/TAG.perf
  local tag=$1; shift
  if [ -n "$haveperf" ]; then
    perf stat -I 100 -x, -o "$work/$tag.perf" -e task-clock,raw_syscalls:sys_enter,context-switches \
      -e syscalls:sys_enter_write,syscalls:sys_enter_writev,syscalls:sys_enter_sendto,syscalls:sys_enter_sendmsg -- "$@"
  else
    : >"$work/$tag.perf"
    "$@"
  fi
}

# one GROUND PAIR TOOL N DUMP: one run of TOOL (nb or rb), a row into $work/rows
one() {
  local g=$1 i=$2 tool=$3 n=$4 dump=$5 tag=$1-$2-$3 r0 r1 rate ph
  if [ "$g" = strfry ]; then start_relay strfry; fi
  r0=$(relay_stat)
  local bin=$rb envs=$RB_ENV
  if [ "$tool" = rbB ]; then bin=$RB_B envs=$RB_B_ENV; fi
  if [ "$tool" = floor ]; then
    measure "$tag" "$work/floor" -addr "${url#ws://}" -conns "$CONNS" -events "$n" -dump "$dump" $FLOOR_FLAGS >"$work/$tag.out" 2>&1 ||
      fail "bench/floor exited $?" "$work/$tag.out"
    rate=$(python3 bench/peers.py floor "$work/$tag.out" "$n" 2>"$work/$tag.why") ||
      fail "bench/floor's figures did not check out ($(cat "$work/$tag.why"))" "$work/$tag.out"
  elif [ "$tool" = nb ]; then
    measure "$tag" "$PEER" -r "$url" -w "$CONNS" --rate 0 --only-peak -e "$n" -d 3600 >"$work/$tag.out" 2>&1 ||
      fail "nostr-bench exited $?" "$work/$tag.out"
    rate=$(python3 bench/peers.py nb "$work/$tag.out" "$n" 2>"$work/$tag.why") ||
      fail "nostr-bench's figures did not check out ($(cat "$work/$tag.why"))" "$work/$tag.out"
  else
    measure "$tag" env $envs "$bin" run --relay "$url" --mode wait --skip-query --concurrency "$CONNS" \
      --corpus "$dump" --cache-dir "$work/cache" --no-progress --quiet --json "$work/$tag.json" >"$work/$tag.out" 2>&1 ||
      fail "relaybench exited $?" "$work/$tag.out"
    rate=$(python3 bench/peers.py rb "$work/$tag.json" "$n" 2>"$work/$tag.why") ||
      fail "relaybench's figures did not check out ($(cat "$work/$tag.why"))" "$work/$tag.json"
  fi
  r1=$(relay_stat)
  ph=$(python3 bench/peers.py phase "$work/$tag.perf" "$n" "$rate" 2>"$work/$tag.why") ||
    fail "perf's intervals did not check out ($(cat "$work/$tag.why"))" "$work/$tag.perf"
  if [ "$g" = strfry ]; then bench_relay_stop; fi
  echo "$g $i $tool $rate $ph $(echo "$r0 $r1" | awk '{ print $3 - $1, $4 - $2 }') $(getconf CLK_TCK) $n $(cut -d' ' -f1 /proc/loadavg)" |
    tee -a "$work/rows" >&2
}

for g in $GROUNDS; do
  n=$EVENTS
  if [ "$g" = strfry ]; then n=$STRFRY_EVENTS; fi
  if [ ! -f "$work/k1-$n.ndjson" ]; then kind1 "$n"; fi
  if [ "$g" != strfry ]; then start_relay "$g"; fi
  for i in $(seq "$PAIRS"); do
    echo "== $g, pair $i" >&2
    for t in $TOOLS; do one "$g" "$i" "$t" "$n" "$work/k1-$n.ndjson"; done
  done
  if [ "$g" != strfry ]; then bench_relay_stop; fi
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
python3 bench/peers.py table "$work/rows" >"$work/table" || fail "the table did not check out" "$work/rows"

dirty=""
git diff --quiet HEAD -- . 2>/dev/null || dirty=" (+uncommitted changes)"
{
  echo
  echo "## $(date -u +%Y-%m-%dT%H:%MZ) · commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$dirty · relaybench vs nostr-bench on three grounds (bench/peers.sh)"
  echo
  echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(uname -sr), $(go env GOVERSION); load average before: $load0, after: $load1 (the runs keep both cores busy: above ~2 others were running too)"
  echo
  echo "Grounds: khatru = bench/khatrusink (khatru v0.19.1, store keeps nothing; $EVENTS events a run), strfry ($STRFRY_EVENTS"
  echo "events a run, fresh database each run), sink = relaybench's own sink ($EVENTS events a run). $CONNS connections,"
  echo "one EVENT in flight each, every OK awaited; $PAIRS alternating pairs per ground, nostr-bench first. Both send kind-1"
  echo "events of ~645 bytes: nostr-bench its own, relaybench a kind-1 export (--size $SIZE).${RELAY_ENV:+ Relay environment: $RELAY_ENV.}${RB_ENV:+ relaybench environment: $RB_ENV.}"
  echo "Tools in each pair, in order: $TOOLS.${FLOOR_FLAGS:+ floor flags: $FLOOR_FLAGS.}${RB_B:+ relaybench B: $RB_B_DESC${RB_B_ENV:+ with $RB_B_ENV}.}"
  echo "Client figures from perf stat's 100 ms intervals over each tool's publish phase; relay figures from /proc over each run."
  echo
  cat "$work/table"
} | tee -a "$OUT"
