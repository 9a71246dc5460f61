# Shared by the bench scripts: sourced (`. bench/lib.sh`) from the
# repository's root, after `set -euo pipefail`, with the script's arguments.

# -h or --help: the script's header comment (what it measures, its
# environment), then exit 0, before any work or check.
case "${1:-}" in
  -h | --help)
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "bench/$(basename "$0")"
    exit 0
    ;;
esac

# bench_work makes the work dir $work, removed on exit together with the
# relay started in the background as $relaypid (if any), and builds
# relaybench there as $rb.
bench_work() {
  work=$(mktemp -d)
  relaypid=""
  trap bench_cleanup EXIT INT TERM
  go build -o "$work/relaybench" ./cmd/relaybench
  rb="$work/relaybench"
}

bench_cleanup() {
  if [ -n "$relaypid" ]; then kill "$relaypid" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  rm -rf "$work"
}

# bench_sink starts the sink relay in the background as $relaypid and sets
# $url once it listens.
bench_sink() {
  "$rb" relay serve --store sink >"$work/sink.out" 2>"$work/sink.err" &
  relaypid=$!
  for _ in $(seq 100); do grep -q '^listening ' "$work/sink.out" && break; sleep 0.1; done
  url=$(sed -n 's/^listening //p' "$work/sink.out")
  [ -n "$url" ] || { echo "sink relay did not start: $(cat "$work/sink.err")" >&2; exit 1; }
}

# bench_need_strfry ends the script (skipped, nothing measured, exit 1)
# unless strfry is found: $BIN_DIR/strfry when BIN_DIR is set, otherwise
# strfry on PATH (BIN_DIR is then its folder). No other folder is looked in:
# the one line says what is needed and how to get it. $1 names the script;
# $2, when given, ends the line (another way out).
bench_need_strfry() {
  local get="build it from https://github.com/hoytech/strfry (README: compare, Getting the relays; Known limits names the version checked)" found
  if [ -n "${BIN_DIR:-}" ]; then
    [ -x "$BIN_DIR/strfry" ] && return
    echo "$1: skipped, nothing measured: BIN_DIR=$BIN_DIR holds no executable strfry: $get, then run BIN_DIR=DIR $1 with DIR its folder${2:+$2}" >&2
    exit 1
  fi
  if found=$(command -v strfry) && [ -x "$found" ]; then
    BIN_DIR=$(dirname "$found")
    return
  fi
  echo "$1: skipped, nothing measured: needs strfry (no BIN_DIR, none on PATH): $get, then run BIN_DIR=DIR $1 with DIR its folder, or put it on PATH${2:+$2}" >&2
  exit 1
}

# bench_strfry_start PORT starts $BIN_DIR/strfry on 127.0.0.1:PORT with a
# fresh database in $work/strfry-db as $relaypid, and waits until it listens.
bench_strfry_start() {
  rm -rf "$work/strfry-db" && mkdir -p "$work/strfry-db"
  cat >"$work/strfry.conf" <<CONF
db = "$work/strfry-db/"
relay {
    bind = "127.0.0.1"
    port = $1
    nofiles = 0
    maxWebsocketPayloadSize = 1048576
}
CONF
  # shellcheck disable=SC2086 # RELAY_PIN is a command prefix ("taskset -c 0") or nothing
  ${RELAY_PIN:-} "$BIN_DIR/strfry" --config="$work/strfry.conf" --verbosity=WARNING relay >"$work/strfry.log" 2>&1 &
  relaypid=$!
  for _ in $(seq 100); do (echo >"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return; sleep 0.1; done
  echo "strfry did not start: $(tail -3 "$work/strfry.log")" >&2
  exit 1
}

# bench_relay_stop stops the relay started as $relaypid and waits for it.
bench_relay_stop() {
  kill "$relaypid" 2>/dev/null || true
  wait "$relaypid" 2>/dev/null || true
  relaypid=""
}
