#!/usr/bin/env bash
# Writes hot-functions.txt (read by order-cc.sh when it links `clawhost`):
# the functions the binary executes in three common runs, recorded with
# valgrind's callgrind, as names without build hashes (hot-names.awk).
#
#   1. `clawhost run` with the scripted model and 10 plugins whose tools
#      the model calls (the run tests/benches/installed_rss.sh measures);
#   2. `clawhost run` against a loopback OpenAI server (fake-openai.py)
#      streaming a plugin tool call and an answer;
#   3. `clawhost gateway` serving one streamed chat completion of that kind.
#
# Each run is made twice and only the second is kept: the first compiles
# the plugins for valgrind's CPU, which a warm start does not do.
#
# Usage: host/cli/link/profile.sh [clawhost binary with symbols]
# By default it profiles the release build itself (what `cargo install`
# links): it relinks it, keeping order-cc.sh's first link, which has the
# symbols the installed binary lacks. Fat LTO inlines differently from other
# profiles, so a list made from another build matches less of this one.
# Needs valgrind, python3, curl and the built plugins (bash plugins/build.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
[ -f "$root/target/plugins/bench-noop/plugin.wasm" ] || { echo "build the plugins first: bash plugins/build.sh" >&2; exit 1; }
dir=$(mktemp -d)
server= gateway=
cleanup() {
  for pid in $server $gateway; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
bin=${1:-}
if [ -z "$bin" ]; then
  touch "$root/host/cli/src/main.rs" # so that cargo links the binary again
  (cd "$root" && CLAWHOST_LINK_KEEP=$dir/clawhost cargo build --release --locked -p clawhost --bin clawhost)
  bin=$dir/clawhost
  [ -f "$bin" ] || { echo "order-cc.sh did not link the binary (not lld?)" >&2; exit 1; }
fi
bin=$(realpath "$bin")

n=10
# shellcheck source=../../../tests/benches/noop_packages.sh
source "$root/tests/benches/noop_packages.sh"
noop_packages "$dir" "$n"

python3 "$here/fake-openai.py" noop_0_measure >"$dir/port" &
server=$!
for _ in $(seq 50); do [ -s "$dir/port" ] && break; sleep 0.1; done
port=$(cat "$dir/port")
gateway_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$dir/clawhost.json" <<JSON
{
  "models": {"providers": {
    "s": {"api": "scripted", "script": "$dir/script.json", "models": [{"id": "m"}]},
    "o": {"api": "openai-completions", "baseUrl": "http://127.0.0.1:$port/v1", "apiKey": "k",
          "models": [{"id": "m"}]}
  }},
  "agents": {"defaults": {"model": "s/m", "maxToolCallsPerTurn": $((n + 1))},
             "list": [{"id": "main"}, {"id": "web", "model": "o/m"}]},
  "plugins": {"paths": ["$dir/plugins"], "entries": {$(join "${entries[@]}")},
              "cacheDir": "$dir/cache"},
  "sessions": {"dir": "$dir/sessions"},
  "gateway": {"bind": "127.0.0.1:$gateway_port"}
}
JSON

profiled=0
# under_callgrind ARG…: `clawhost ARG…` under callgrind, as run number
# $profiled. It replaces the shell it runs in (call it in a subshell or
# with `&`), so that a background run's pid is valgrind's own.
under_callgrind() {
  HOME=$dir exec valgrind --tool=callgrind --demangle=no --callgrind-out-file="$dir/cg.$profiled" \
    "$bin" -c "$dir/clawhost.json" "$@" >"$dir/out.$profiled" 2>&1
}
# callgrind ARG…: the next run, which must succeed.
callgrind() {
  profiled=$((profiled + 1))
  (under_callgrind "$@") || { tail -n 5 "$dir/out.$profiled" >&2; exit 1; }
}
for _ in 1 2; do callgrind run "a question"; done
grep -q "^answer › done" "$dir/out.$profiled" || { echo "the scripted run did not finish" >&2; exit 1; }
for _ in 1 2; do callgrind run --model o/m "a question"; done
grep -q "answered" "$dir/out.$profiled" || { echo "the HTTP run did not finish" >&2; exit 1; }
for _ in 1 2; do
  profiled=$((profiled + 1))
  under_callgrind gateway &
  gateway=$!
  for _ in $(seq 600); do curl -sf "http://127.0.0.1:$gateway_port/healthz" >/dev/null && break; sleep 0.1; done
  curl -sSf "http://127.0.0.1:$gateway_port/v1/chat/completions" -H 'content-type: application/json' \
    -d '{"model": "web", "stream": true, "messages": [{"role": "user", "content": "a question"}]}' \
    >"$dir/gateway.$profiled"
  kill -TERM "$gateway"
  wait "$gateway" || true
  gateway=
done
grep -q "answered" "$dir/gateway.$profiled" || { echo "the gateway turn did not finish" >&2; exit 1; }

# Function names of the kept (even) runs without hashes: the first run's,
# then what the second adds, then what the third adds. A run touches few
# pages of code it does not execute when its functions sit together (the
# scripted run with 10 plugins peaks ~0.9 MiB higher when the three runs'
# functions are interleaved); each group is sorted, since the order
# callgrind meets functions in varies between runs.
for i in 2 4 6; do
  sed -n 's/^c\{0,1\}fn=([0-9]*) //p' "$dir/cg.$i" |
    sed -e "s/'[0-9]*\$//" -e '/^0x[0-9a-f]*$/d' | # recursion marks; JIT code
    awk -f "$here/hot-names.awk" | LC_ALL=C sort -u >"$dir/names.$i"
done
awk '!seen[$0]++' "$dir/names.2" "$dir/names.4" "$dir/names.6" >"$dir/hot"
{
  echo "# Written by profile.sh; read by order-cc.sh. Do not edit by hand."
  cat "$dir/hot"
} >"$here/hot-functions.txt"
echo "hot-functions.txt: $(wc -l <"$dir/hot") functions"
