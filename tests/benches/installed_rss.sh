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
# shellcheck source=noop_packages.sh
source "$root/tests/benches/noop_packages.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
noop_packages "$dir" "$n"
noop_config "$dir" ", \"maxToolCallsPerTurn\": $((n + 1))" ""
run() { HOME="$dir" /usr/bin/time -f "%M" "$bin" -c "$dir/clawhost.json" run "a question" \
  >"$dir/out" 2>"$dir/time" || { tail -n 3 "$dir/out" "$dir/time" >&2; exit 1; }; tail -n 1 "$dir/time"; }
run >/dev/null
grep -q "^answer › done" "$dir/out" || { echo "the turn did not finish:" >&2; tail -n 3 "$dir/out" >&2; exit 1; }
best=$(for _ in $(seq "$runs"); do run; done | sort -n | head -n 1)
awk -v k="$best" -v n="$n" 'BEGIN { printf "%d plugins: peak RSS %.1f MiB\n", n, k / 1024 }'
