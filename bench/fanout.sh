#!/usr/bin/env bash
# Fan-out at scale against strfry ($BIN_DIR/strfry: BIN_DIR=DIR names your
# strfry build's folder, else the strfry on PATH; started by
# relaybench), appended to bench/RESULTS.md with the machine, date, commit and
# load average:
#   - idle connections per GiB of client memory: subscribe with IDLE_SUBS
#     (default "1000 10000") subscribers and one event; the client's resident
#     memory grows by this much between before the dial and after every EOSE
#     (the results file's counts.client_bytes_per_subscription);
#   - deliveries absorbed per second and client CPU per delivery at 1,000 and
#     10,000 subscribers (kind filter: every event reaches every subscriber;
#     EVENTS_1K and EVENTS_10K events of 1 KB);
#   - the issue's case: 2,000 subscribers × 3,000 events (mix filters,
#     2,478,240 deliveries), against its 9.4 µs per delivery baseline.
# Every delivery is verified and timed; client CPU per delivery is the
# client's CPU time over the timed window divided by the credited deliveries.
# Run it on a quiet machine: other load shows up in every figure (the section
# says "machine loaded" when the load average was above the core count).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_need_strfry bench/fanout.sh
IDLE_SUBS=${IDLE_SUBS:-"1000 10000"}
EVENTS_1K=${EVENTS_1K:-3000}
EVENTS_10K=${EVENTS_10K:-300}
OUT=${OUT:-bench/RESULTS.md}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
if [ -n "${KEEP:-}" ]; then # keep the results files (and relay logs) in $KEEP
  mkdir -p "$KEEP"
  trap - EXIT INT TERM
  work=$KEEP
fi
go build -o "$work/relaybench" ./cmd/relaybench
rb="$work/relaybench"
load0=$(cut -d' ' -f1-3 /proc/loadavg)

# run NAME ARGS...: one subscribe run against strfry, results in $work/NAME.json
run() {
  local name=$1
  shift
  "$rb" subscribe --relay strfry --bin-dir "$BIN_DIR" --out "$work" --json "$work/$name.json" \
    --no-progress --quiet --cache-dir "$work/cache" "$@" || true
}

# row NAME LABEL: one table row from a results file
row() {
  python3 - "$work/$1.json" "$2" <<'EOF'
import json, sys
f = json.load(open(sys.argv[1]))
ph = f["runs"][0]["phases"][0]
c, r, res = ph["counts"], ph.get("rates", {}), ph.get("resources") or {}
d = c.get("deliveries", 0)
cpu = res.get("client_cpu_secs", 0)
secs = ph["duration_ns"] / 1e9
v = ph.get("verification") or {}
us = f"{1e6 * cpu / d:.2f} µs" if d else "–"
cores = f"{cpu / secs:.2f}" if secs else "–"
relay = res.get("relay_cpu_secs")
rc = f"{relay / secs:.2f}" if relay and secs else "–"
lat = (ph.get("latency") or {}).get("deliver") or {}
p50v = (lat.get("percentiles_ns") or {}).get("50")
p50 = f"{p50v / 1e6:.1f} ms" if p50v else "–"
reads = c.get("subscriber_reads", 0)
frames = c.get("subscriber_frames", 0)
rpf = f"{reads / frames:.2f}" if frames else "–"
ok = "PASSED" if v.get("passed") else f"FAILED (missing {v.get('missing', 0):,})"
print(f"| {sys.argv[2]} | {ph['params']['subscribers']:,} | {ph['params']['events']:,} | {d:,} / {v.get('expected', 0):,} | "
      f"{r.get('deliveries_per_sec', 0):,.0f} | {us} | {cores} | {rc} | {p50} | {rpf} | {ok} |")
EOF
}

idle_row() {
  python3 - "$work/$1.json" <<'EOF'
import json, sys
ph = json.load(open(sys.argv[1]))["runs"][0]["phases"][0]
per = ph["counts"].get("client_bytes_per_subscription", 0)
n = ph["params"]["subscribers"]
src = ph["params"].get("source_addrs", "one")
gib = f"{(1 << 30) / per:,.0f}" if per else "–"
print(f"| {n:,} | {ph['counts'].get('client_rss_idle_bytes', 0) / (1 << 20):.1f} MiB | {per / 1024:.1f} KiB | {gib} | {src} |")
EOF
}

for n in $IDLE_SUBS; do
  run "idle-$n" --subscribers "$n" --events 1 --filter kind --grace 1s --timeout 60s
done
run "fan-1k" --subscribers 1000 --events "$EVENTS_1K" --filter kind --timeout 60s --grace 10s
run "fan-10k" --subscribers 10000 --events "$EVENTS_10K" --filter kind --timeout 60s --grace 10s
run "issue-2k" --subscribers 2000 --events 3000 --timeout 60s
load1=$(cut -d' ' -f1-3 /proc/loadavg)

cores=$(nproc)
loaded=""
# The runs themselves keep both cores busy (client and relay): the machine
# counts as loaded when something else was already running before them.
if python3 -c "import sys; sys.exit(0 if float('$load0'.split()[0]) > 1.0 else 1)"; then
  loaded=" · machine loaded"
fi
{
  echo
  echo "## $(date -u +%Y-%m-%dT%H:%MZ) · commit $(git rev-parse --short HEAD) · fan-out at scale against strfry${loaded}"
  echo
  echo "Machine: $cores cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr), $(go env GOVERSION); load average before: $load0, after: $load1"
  echo
  echo "Reproduce: \`BIN_DIR=DIR bench/fanout.sh\` (DIR: the folder of your strfry build; strfry started by relaybench; client and relay share the machine)."
  echo
  echo "Idle subscriptions (one connection and one live REQ each), client resident memory between before the dial and after every EOSE:"
  echo
  echo "| subscribers | client memory | per subscription | connections per GiB | source addresses |"
  echo "|---:|---:|---:|---:|---|"
  for n in $IDLE_SUBS; do idle_row "idle-$n"; done
  echo
  echo "Deliveries absorbed (1 KB events, every delivery verified and timed; client CPU over the timed window):"
  echo
  echo "| run | subscribers | events | deliveries / expected | deliveries/s | client CPU per delivery | client cores | relay cores | deliver p50 | reads per message | verification |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
  row fan-1k "kind filter"
  row fan-10k "kind filter"
  row issue-2k "issue #13 case (mix filters; baseline 9.4 µs, 77,600/s)"
} >>"$OUT"
echo "bench/fanout.sh: appended to $OUT" >&2
