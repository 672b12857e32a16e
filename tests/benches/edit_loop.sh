#!/usr/bin/env bash
# The plugin author's loop, per language, with an installed binary: a new
# package's first `run --plugin` (build and compile), a second one with no
# edit, and an edit-run cycle for a one-line change (a tool description),
# each a whole `clawhost run --plugin DIR` process against the offline
# scripted model. Also, for Python, a second plugin's first run after its
# build (what compiling another CPython-based component costs).
#
# Usage: tests/benches/edit_loop.sh <clawhost binary> [runs=3] [langs="rust js python"]
# Prints one line per step and language: the median of `runs` and each run,
# in seconds. Every round starts from a fresh package and component cache
# (the SDKs, their build tools and the Rust std build are shared and warmed
# once first), so the figures are an author's first day, not a warm cache.
set -euo pipefail
bin=$(realpath "$1")
runs=${2:-3}
langs=${3:-rust js python}
base=$(mktemp -d)
trap 'rm -rf "$base"' EXIT
export XDG_DATA_HOME="$base/data" NO_COLOR=1
export CARGO_TARGET_DIR="$base/guest-target"
unset CLAWHOST_CONFIG CLAWHOST_LOG RUST_LOG
echo '[{"answer": "done"}, {"answer": "done"}, {"answer": "done"}, {"answer": "done"}]' >"$base/script.json"

# Seconds `"$@"` takes (output kept in $base/out; a failure ends the bench);
# its peak RSS in MiB is appended to $base/peaks.
timed() {
  local start end
  start=$EPOCHREALTIME
  /usr/bin/time -f %M -o "$base/rss" "$@" >"$base/out" 2>&1 \
    || { tail -n 20 "$base/out" >&2; exit 1; }
  end=$EPOCHREALTIME
  peak=$(( $(cat "$base/rss") / 1024 ))
  echo "$peak" >>"$base/peaks"
  echo "scale=3; (${end/./} - ${start/./}) / 1000000" | bc
}

# A fresh author's directory with a config, and a new package `id` in it.
fresh() {
  local dir=$1 lang=$2 id=$3
  rm -rf "$dir"; mkdir -p "$dir"
  cat >"$dir/clawhost.json" <<JSON
{"models": {"providers": {"scripted": {"api": "scripted", "script": "$base/script.json"}}},
 "agents": {"defaults": {"model": "scripted/test"}},
 "plugins": {"cacheDir": "$dir/cache", "cacheKeyFile": "$dir/cache.key"}}
JSON
  (cd "$dir" && "$bin" plugin new "$id" --lang "$lang" >/dev/null)
}

run_plugin() {
  local dir=$1 id=$2
  (cd "$dir" && XDG_CACHE_HOME="$dir/xdg-cache" timed "$bin" -c clawhost.json run --plugin "$id" "hello")
}

median() { tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

report() {
  local what=$1; shift
  printf '%-44s %6.3f s   (%s)\n' "$what" "$(echo "$@" | median)" "$*"
}

# Warm what every author pays once: the SDKs' build tools, the std build.
for lang in $langs; do
  fresh "$base/warm" "$lang" warm-up
  (cd "$base/warm" && "$bin" plugin build warm-up >/dev/null 2>&1)
done

for lang in $langs; do
  first=() again=() edit=() second=() edit_rss=()
  for _ in $(seq "$runs"); do
    dir="$base/author"
    fresh "$dir" "$lang" "loop-$lang"
    first+=("$(run_plugin "$dir" "loop-$lang")")
    again+=("$(run_plugin "$dir" "loop-$lang")")
    case $lang in
      rust) src="loop-$lang/src/lib.rs" ;;
      python) src="loop-$lang/app.py" ;;
      *) src="loop-$lang/app.js" ;;
    esac
    sed -i 's/Echoes the text/Echoes the text back/' "$dir/$src"
    grep -q 'Echoes the text back' "$dir/$src"
    : >"$base/peaks"
    edit+=("$(run_plugin "$dir" "loop-$lang")")
    edit_rss+=("$(cat "$base/peaks")")
    if [ "$lang" = python ]; then
      (cd "$dir" && "$bin" plugin new "other-$lang" --lang python >/dev/null \
        && XDG_CACHE_HOME="$dir/xdg-cache" "$bin" plugin build "other-$lang" >/dev/null 2>&1)
      second+=("$(run_plugin "$dir" "other-$lang")")
    fi
  done
  report "$lang: first run --plugin (build + compile)" "${first[@]}"
  report "$lang: second run --plugin, no edit" "${again[@]}"
  report "$lang: edit one line, run --plugin" "${edit[@]}"
  echo "    its peak RSS, MiB: ${edit_rss[*]}"
  if [ "${#second[@]}" -gt 0 ]; then
    report "$lang: another plugin's first run (built)" "${second[@]}"
  fi
done
