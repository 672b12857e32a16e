#!/usr/bin/env bash
# Peak resident memory of an installed `clawhost` binary running one whole
# turn (`clawhost run`, the offline scripted model) with N plugins loaded
# whose tools the model calls once each. The plugins are copies of
# plugins/bench-noop under distinct ids, as in the `plugins` bench.
#
# Usage: tests/benches/installed_rss.sh <clawhost binary> [N=10] [runs=5]
# Prints the smallest of `runs` peak RSS figures (VmHWM, via GNU time), in
# MiB; the first run fills the compiled-component cache and is not counted.
set -euo pipefail
bin=$(realpath "$1")
n=${2:-10}
runs=${3:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
noop="$root/target/plugins/bench-noop"
[ -f "$noop/plugin.wasm" ] || { echo "build the plugins first: bash plugins/build.sh" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/plugins"
entries=() calls=()
for i in $(seq 0 $((n - 1))); do
  mkdir -p "$dir/plugins/noop-$i"
  cp "$noop/plugin.wasm" "$dir/plugins/noop-$i/"
  sed "s/\"id\": \"noop\"/\"id\": \"noop-$i\"/" "$noop/openclaw.plugin.json" \
    > "$dir/plugins/noop-$i/openclaw.plugin.json"
  entries+=("\"noop-$i\": {\"config\": {\"id\": \"noop-$i\"}}")
  calls+=("{\"name\": \"noop_${i}_measure\", \"arguments\": {\"data\": \"{{user}}\"}}")
done
join() { local IFS=,; echo "$*"; }
if [ "$n" -gt 0 ]; then
  echo "[{\"toolCalls\": [$(join "${calls[@]}")]}, {\"answer\": \"done\"}]"
else
  echo '[{"answer": "done"}]'
fi > "$dir/script.json"
cat > "$dir/clawhost.json" <<JSON
{
  "models": {"providers": {"s": {"api": "scripted", "script": "$dir/script.json", "models": [{"id": "m"}]}}},
  "agents": {"defaults": {"model": "s/m", "maxToolCallsPerTurn": $((n + 1))}},
  "plugins": {"paths": ["$dir/plugins"], "entries": {$(join "${entries[@]}")},
              "cacheDir": "$dir/cache"},
  "sessions": {"dir": "$dir/sessions"}
}
JSON
run() { HOME="$dir" /usr/bin/time -f "%M" "$bin" -c "$dir/clawhost.json" run "a question" \
  >"$dir/out" 2>"$dir/time" || { tail -n 3 "$dir/out" "$dir/time" >&2; exit 1; }; tail -n 1 "$dir/time"; }
run >/dev/null
grep -q "^answer › done" "$dir/out" || { echo "the turn did not finish:" >&2; tail -n 3 "$dir/out" >&2; exit 1; }
best=$(for _ in $(seq "$runs"); do run; done | sort -n | head -n 1)
awk -v k="$best" -v n="$n" 'BEGIN { printf "%d plugins: peak RSS %.1f MiB\n", n, k / 1024 }'
