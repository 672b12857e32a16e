#!/usr/bin/env bash
# Wall time of whole `clawhost run` processes (an installed binary, the
# offline scripted model answering at once) with 0 and N plugins loaded from
# a warm compiled cache: what a plugin adds to a process's start, each
# process fresh (the `plugins` bench starts hosts over and over in one
# process, where the allocator's state from earlier starts weighs on later
# ones). The plugins are copies of plugins/bench-noop under distinct ids, as
# in the `plugins` bench. Sessions are not fsynced (`sessions.fsync`), so the
# disk's flush times do not swamp the difference.
#
# Usage: tests/benches/installed_start.sh <clawhost binary> [N=100] [runs=40]
# Runs 0 and N plugins alternately, `runs` times each (after one run each
# that fills the cache), and prints each one's median and quartiles, in ms,
# and the median difference per plugin, in µs.
set -euo pipefail
bin=$(realpath "$1")
n=${2:-100}
runs=${3:-40}
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=noop_packages.sh
source "$root/tests/benches/noop_packages.sh"
base=$(mktemp -d)
trap 'rm -rf "$base"' EXIT
for count in 0 "$n"; do
  dir="$base/$count"
  mkdir -p "$dir"
  noop_packages "$dir" "$count"
  echo '[{"answer": "done"}]' >"$dir/script.json"
  noop_config "$dir" "" ', "fsync": false'
done
# One run of `count` plugins; prints its wall time in µs.
run() {
  local dir="$base/$1" start end
  start=$EPOCHREALTIME
  HOME="$dir" "$bin" -c "$dir/clawhost.json" run "a question" >"$dir/out" 2>&1 \
    || { tail -n 3 "$dir/out" >&2; exit 1; }
  end=$EPOCHREALTIME
  echo $(( (${end/./} - ${start/./}) ))
}
for count in 0 "$n"; do
  run "$count" >/dev/null
  grep -q "^answer › done" "$base/$count/out" \
    || { echo "the turn did not finish:" >&2; tail -n 3 "$base/$count/out" >&2; exit 1; }
done
for _ in $(seq "$runs"); do
  run 0 >>"$base/times-0"
  run "$n" >>"$base/times-$n"
done
# quartiles FILE: "q1 median q3" of the µs figures in FILE, in ms.
quartiles() {
  sort -n "$1" | awk '{ v[NR] = $1 } END {
    printf "%.2f %.2f %.2f", v[int(NR / 4) + 1] / 1000, v[int(NR / 2) + 1] / 1000, v[int(3 * NR / 4) + 1] / 1000 }'
}
read -r _ zero _ <<<"$(quartiles "$base/times-0")"
read -r _ many _ <<<"$(quartiles "$base/times-$n")"
for count in 0 "$n"; do
  read -r q1 med q3 <<<"$(quartiles "$base/times-$count")"
  echo "$count plugins: median $med ms (quartiles $q1–$q3 ms, $runs runs)"
done
awk -v a="$zero" -v b="$many" -v n="$n" \
  'BEGIN { printf "per plugin: %.1f µs (difference of the medians / %d)\n", (b - a) * 1000 / n, n }'
