#!/usr/bin/env bash
# Idempotent installer for what tests and benchmarks need (Debian 12, run as root).
# Skips apt entirely when every package is already installed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PACKAGES=(
  build-essential pkg-config   # C toolchain for -sys crates (rusqlite bundled)
  curl jq                      # used by bench/run
  wrk                          # HTTP load generator for bench/run
  sqlite3                      # inspecting bench/test databases
  postgresql-client            # psql, pg_isready
  postgresql                   # pg_ctlcluster + server for PostgreSQL-backed tests
  chromium                     # headless browser for the /docs page test
  git                          # source imports run the git binary (and their tests make repositories)
  redis-server                 # limits shared by many nodes (tests, scripts/cluster)
  haproxy                      # the load balancer of scripts/cluster
  gh                           # the gh CLI client suite (conformance/gh)
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi

if ! cargo nextest --version >/dev/null 2>&1; then
  echo "install-deps: installing cargo-nextest"
  cargo install --locked cargo-nextest
fi

# Node.js and npm for the JavaScript client suite (conformance/js; packages come from its lock file).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "install-deps: installing nodejs npm"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends nodejs npm
fi

# Python packages of the client suite and the fuzzer, pinned in their requirements files.
for req in conformance/python/requirements.txt conformance/fuzz/requirements.txt; do
  [ -f "$req" ] && python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore -r "$req"
done
