#!/usr/bin/env bash
# The floor of live delivery on this machine, and how close relaybench is to
# it: SUBS subscriptions (default 2,000) to strfry ($BIN_DIR/strfry, BIN_DIR=DIR
# naming your build's folder, else the strfry on PATH; started here with a fresh database for each run), every one receiving
# every one of EVENTS fresh events (default 3,000, ~1 KB), client CPU per
# delivery, in alternating rounds (ROUNDS, default 2) of:
#   - floor, epoll:      bench/fanfloor -mode epoll (sockets out of Go's
#                        netpoller, one epoll thread, frames counted, nothing
#                        verified or timed);
#   - floor, uring:      bench/fanfloor -mode uring (the same, through one
#                        io_uring: a receive in flight per socket, one
#                        io_uring_enter per batch instead of a read(2) each;
#                        not in the default CLIENTS);
#   - floor, goroutines: bench/fanfloor -mode goroutines (a goroutine per
#                        connection blocked in net.Conn.Read);
#   - relaybench subscribe --filter kind (shared reader threads, every
#                        delivery verified and timed);
#   - the same with RELAYBENCH_SHARED_READERS=off (a goroutine per
#                        connection, as before).
# The floor's events are published by `relaybench run` from another process.
# A relaybench round whose verdict is not passed keeps its results file and
# the relay's log in KEEP (default: a new fanfloor-failed.* folder under
# $TMPDIR, named on stderr): the work dir goes when the script ends.
# CLIENTS (default "epoll goroutines shared goro") picks the clients run in
# each round; "base" adds relaybench subscribe as built in BASE (another
# build, e.g. the commit before a change: an A/B within the same rounds).
# PIN=RELAY:CLIENT (e.g. PIN=0:1, CPU lists as taskset takes them) runs the
# relay and the floor's publisher on the first CPUs and every client on the
# second, so that a client's own footprint does not set the relay's pace
# (on 2 cores, unpinned, a client that leaves the relay more CPU gets its
# events in bursts and is woken less often per delivery).
# The section ends with relaybench's client CPU per delivery over the epoll
# floor's (and BASE's over the floor's, and relaybench's over BASE's),
# round by round, and the medians.
# Appends a table to bench/RESULTS.md with the machine, date, commit and load.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_need_strfry bench/fanfloor.sh
BIN_DIR=$(cd "$BIN_DIR" && pwd)
SUBS=${SUBS:-2000}
EVENTS=${EVENTS:-3000}
ROUNDS=${ROUNDS:-2}
CLIENTS=${CLIENTS:-"epoll goroutines shared goro"}
PORT=${PORT:-7791}
# relaybench waits this long after the last OK for owed deliveries: at
# 10,000 subscriptions strfry delivers the last events ~17 s after their OK,
# and 10 s turned late deliveries into missing ones (a wrong-answers verdict)
GRACE=${GRACE:-60s}
OUT=${OUT:-bench/RESULTS.md}
PIN=${PIN:-}
RELAY_PIN="" CLIENT_PIN=""
if [ -n "$PIN" ]; then
  case $PIN in *:*) ;; *) echo "bench/fanfloor.sh: PIN=$PIN: want RELAY_CPUS:CLIENT_CPUS, e.g. PIN=0:1" >&2 && exit 2 ;; esac
  command -v taskset >/dev/null || { echo "bench/fanfloor.sh: PIN needs taskset (Debian: util-linux)" >&2 && exit 2; }
  RELAY_PIN="taskset -c ${PIN%%:*}" CLIENT_PIN="taskset -c ${PIN#*:}"
  $RELAY_PIN true && $CLIENT_PIN true || { echo "bench/fanfloor.sh: PIN=$PIN: taskset refused these CPUs" >&2 && exit 2; }
fi
bench_work
go build -o "$work/fanfloor" ./bench/fanfloor
load0=$(cut -d' ' -f1-3 /proc/loadavg)
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# floor MODE: one fanfloor run; prints "µs/delivery deliveries/s reads/delivery"
floor() {
  bench_strfry_start "$PORT"
  $CLIENT_PIN "$work/fanfloor" -addr "127.0.0.1:$PORT" -subs "$SUBS" -mode "$1" -expect "$((SUBS * EVENTS))" -timeout 300s >"$work/floor.out" 2>&1 &
  local fpid=$!
  for _ in $(seq 3000); do grep -q '^ready' "$work/floor.out" && break; sleep 0.1; done
  # the floor's publisher waits for each OK as long as relaybench subscribe's (--timeout below)
  $RELAY_PIN "$rb" run --relay "ws://127.0.0.1:$PORT" --events "$EVENTS" --size 1024 --skip-query --mode wait --concurrency 4 --timeout 60s \
    --no-progress --quiet --cache-dir "$work/cache" --json "$work/pub-$RANDOM.json" >/dev/null 2>&1 || true
  wait "$fpid" || true
  bench_relay_stop
  grep -q '^fanfloor .*deliveries in' "$work/floor.out" || echo "floor $1 gave no figure: $(tail -2 "$work/floor.out" | tr '\n' ' ') strfry: $(tail -2 "$work/strfry.log" | tr '\n' ' ')" >&2
  sed -n 's/.*deliveries in .*s (\([0-9]*\)\/s), client CPU \([0-9.]*\) µs\/delivery.*, \([0-9.]*\) reads\/delivery/\2 \1 \3/p' "$work/floor.out"
}

# rbsub LABEL [env] [binary]: one relaybench subscribe run; prints the same three figures and the verification
rbsub() {
  bench_strfry_start "$PORT"
  rm -f "$work/$1.json"
  env ${2:-} $CLIENT_PIN "${3:-$rb}" subscribe --relay "ws://127.0.0.1:$PORT" --subscribers "$SUBS" --events "$EVENTS" --filter kind \
    --timeout 60s --grace "$GRACE" --no-progress --quiet --cache-dir "$work/cache" --json "$work/$1.json" >/dev/null 2>&1 || true
  bench_relay_stop
  python3 - "$work/$1.json" "$work/strfry.log" "${KEEP:-}" <<'EOF'
import json, os, shutil, sys, tempfile
f = json.load(open(sys.argv[1]))
ph = f["runs"][0]["phases"][0]
c, r, res = ph["counts"], ph.get("rates", {}), ph.get("resources") or {}
d = c.get("deliveries", 0)
verdict = f.get("verdict", {}).get("outcome", "?").replace(" ", "_")  # one field ("wrong answers")
if d == 0:  # say why instead of a figure: the relay's last words
    last = [l.strip() for l in open(sys.argv[2], errors="replace") if l.strip()][-2:]
    print("- 0 - " + verdict + ":_" + "_/_".join(last).replace(" ", "_")[:200])
    sys.exit()
rpf = c.get("subscriber_reads", 0) / max(1, c.get("subscriber_frames", 0))
if verdict != "passed":  # the work dir goes: keep the evidence and say what was wrong
    keep = sys.argv[3] or tempfile.mkdtemp(prefix="fanfloor-failed.")
    os.makedirs(keep, exist_ok=True)
    stem = os.path.join(keep, os.path.basename(sys.argv[1])[:-5] + "-" + str(os.getpid()))
    shutil.copy(sys.argv[1], stem + ".json")
    shutil.copy(sys.argv[2], stem + "-strfry.log")
    print("bench/fanfloor.sh: verdict " + json.dumps(f.get("verdict"))[:4000] + "; kept: " + stem + ".json, " + stem + "-strfry.log", file=sys.stderr)
print(f"{1e6 * res.get('client_cpu_secs', 0) / d:.2f} {r.get('deliveries_per_sec', 0):.0f} {rpf:.2f} {verdict}")
EOF
}

declare -A fig
for r in $(seq "$ROUNDS"); do
  echo "== round $r ($(cut -d' ' -f1-3 /proc/loadavg))" >&2
  for k in $CLIENTS; do
    case $k in
    epoll | uring | uringmulti | goroutines) fig[$k]+="$(floor "$k")|" ;;
    shared) fig[$k]+="$(rbsub shared)|" ;;
    goro) fig[$k]+="$(rbsub goro RELAYBENCH_SHARED_READERS=off)|" ;;
    base) fig[$k]+="$(rbsub base "" "${BASE:?CLIENTS has base: set BASE to a relaybench binary}")|" ;;
    *) echo "bench/fanfloor.sh: unknown client $k in CLIENTS" >&2 && exit 2 ;;
    esac
    echo "$k: ${fig[$k]}" >&2
  done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# row LABEL KEY CHECKED (nothing when KEY was not in CLIENTS)
row() {
  [ -n "${fig[$2]:-}" ] || return 0
  python3 - "$1" "${fig[$2]}" "$3" <<'EOF'
import sys
# one entry per round: a round that gave no figure (said on stderr) keeps its place as "–"
label, runs, checked = sys.argv[1], [x.split() or ["–", "", "–"] for x in sys.argv[2].split("|")[:-1]], sys.argv[3]
us = " / ".join(x[0] for x in runs)
rate = " / ".join(f"{int(x[1]):,}" if x[1].isdigit() else "–" for x in runs)
reads = " / ".join(x[2] for x in runs)
ver = ", ".join(sorted({x[3].replace("_", " ") for x in runs if len(x) > 3})) or "–"
print(f"| {label} | {us} µs | {rate} | {reads} | {checked} | {ver} |")
EOF
}
cores=$(nproc)
# The runs themselves keep both cores busy (client and relay): the machine
# counts as loaded when something else was already running before them.
loaded=""
if python3 -c "import sys; sys.exit(0 if float('$load0'.split()[0]) > 1.0 else 1)"; then
  loaded=" · machine loaded"
fi
dirty=""
commit=$(git rev-parse --short HEAD 2>/dev/null) || commit="unknown (not a git checkout)"
case $commit in unknown*) ;; *) git diff --quiet HEAD -- . || dirty=" (+uncommitted changes)" ;; esac
{
  echo
  echo "## $(date -u +%Y-%m-%dT%H:%MZ) · commit $commit$dirty · live delivery: the floor and relaybench (bench/fanfloor.sh)${loaded}"
  echo
  echo "Machine: $cores cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr), $(go env GOVERSION); load average before: $load0, after: $load1"
  echo
  echo "$(printf "%'d" "$SUBS") subscriptions to strfry (fresh database each run), every one receiving each of $(printf "%'d" "$EVENTS") fresh ~1 KB events ($(printf "%'d" $((SUBS * EVENTS))) deliveries); client CPU per delivery over the delivery window; $ROUNDS alternating rounds (figures per round)${PIN:+; the relay and the floor's publisher pinned to CPUs ${PIN%%:*}, every client (and relaybench's own publisher) to CPUs ${PIN#*:} (PIN=$PIN)}:"
  echo
  echo "| client | client CPU per delivery | deliveries/s | reads per delivery | what it checks | verdict |"
  echo "|---|---:|---:|---:|---|---|"
  row "floor: one epoll thread, sockets out of Go's netpoller" epoll "frame boundaries only"
  row "floor: one io_uring thread, a receive in flight per socket" uring "frame boundaries only"
  row "floor: one io_uring thread, a multishot receive per socket" uringmulti "frame boundaries only"
  row "floor: a goroutine per connection (net.Conn.Read)" goroutines "frame boundaries only"
  row "relaybench subscribe (shared reader threads)" shared "every delivery: bytes or id+signature, filter, duplicates, timed"
  row "relaybench subscribe, RELAYBENCH_SHARED_READERS=off" goro "the same"
  row "relaybench subscribe as built in BASE ($(basename "${BASE:-}"))" base "the same"
  # ratio NAME A B: B's client CPU per delivery over A's, round by round, and the median
  ratio() {
    [ -n "${fig[$2]:-}" ] && [ -n "${fig[$3]:-}" ] || return 0
    python3 - "$1" "${fig[$2]}" "${fig[$3]}" <<'EOF'
import statistics, sys
def us(x):  # a round's µs per delivery, None when it gave no figure
    try:
        return float(x.split()[0])
    except (IndexError, ValueError):
        return None
e, s = ([us(x) for x in a.split("|")[:-1]] for a in sys.argv[2:4])  # one entry per round
r = [b / a for a, b in zip(e, s) if a and b]
if r:
    print(f"\n{sys.argv[1]}, client CPU per delivery, round by round: {' / '.join(f'{x:.2f}' for x in r)}; median {statistics.median(r):.2f}×")
EOF
  }
  ratio "relaybench (shared readers) / epoll floor" epoll shared
  ratio "io_uring floor / epoll floor" epoll uring
  ratio "io_uring multishot floor / epoll floor" epoll uringmulti
  ratio "relaybench as built in BASE / epoll floor" epoll base
  ratio "relaybench / relaybench as built in BASE" base shared
} >>"$OUT"
echo "bench/fanfloor.sh: appended to $OUT" >&2
