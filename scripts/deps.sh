#!/usr/bin/env bash
# Installs the Debian packages relaybench's tests use, if any is missing:
#   gcc, pkg-config     cgo (libsecp256k1; the lmdb and sqlite3 stores of -tags cgostores)
#   libsecp256k1-dev    fast BIP-340 signing (pure Go is the fallback)
#   postgresql          the relayer relay's database (a private cluster per run)
#   chromium            renders the HTML report and the live page (--web) in the browser tests
#   prometheus          scrapes --web's /metrics in the live view's Prometheus test
#   procps              ps/pgrep for the no-orphans tests
# Needs root (or sudo). Safe to run again: it does nothing when all are there.
set -euo pipefail
pkgs=(gcc pkg-config libsecp256k1-dev postgresql chromium prometheus procps ca-certificates git)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
echo "deps: installing ${missing[*]}" >&2
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
