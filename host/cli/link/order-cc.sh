#!/usr/bin/env bash
# The linker for Linux targets (.cargo/config.toml). Every link goes to `cc`
# unchanged except the `clawhost` binary's when rustc links it with lld (its
# default on x86_64 Linux since Rust 1.90). That one is linked:
#
# - with the functions a run executes placed together at the start of
#   `.text` (the names in hot-functions.txt, written by profile.sh): the
#   kernel maps code in 64–128 KiB runs around each page a process touches,
#   and a run's few MiB of code scattered over the ~25 MiB of text of the
#   release build made it map about half of it (BENCHMARKS.md);
# - with relative relocations packed (`-z pack-relative-relocs`) when the C
#   library supports them (glibc 2.36+), so start-up no longer reads ~1.2 MB
#   of relocation records.
#
# The list holds names without the hashes rustc gives symbols (those change
# with the profile, the toolchain and the dependency graph): a first link
# keeps the symbols, the names this build gave the listed functions are read
# from it, and the real link orders them. A function missing from the list
# only lands among the cold ones; nothing else depends on the list.
set -euo pipefail
cc=${CLAWHOST_LINK_CC:-cc}
here=$(cd "$(dirname "$0")" && pwd)

out= prev= lld=no
for arg in "$@"; do
  [ "$prev" = -o ] && out=$arg
  case "$arg" in
    -fuse-ld=lld) lld=yes ;;
    @*) lld=no; break ;; # a response file: its arguments are not read here
  esac
  prev=$arg
done
case "$(basename -- "$out")" in
  clawhost-*) ;; # the binary (and its unit tests), as deps/clawhost-<hash>
  *) exec "$cc" "$@" ;;
esac
[ "$lld" = yes ] && [ -z "${CLAWHOST_LINK_PLAIN:-}" ] || exec "$cc" "$@"
command -v nm >/dev/null || { echo "order-cc.sh: no nm; linking without the hot-function order" >&2; exec "$cc" "$@"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
probe=() prev=
for arg in "$@"; do
  if [ "$prev" = -o ]; then arg=$tmp/probe; fi
  case "$arg" in -s | -Wl,--strip-all | -Wl,-s | -Wl,--strip-debug) ;; *) probe+=("$arg") ;; esac
  prev=$arg
done
"$cc" "${probe[@]}"
# profile.sh profiles this build's own code: keep the probe (it has symbols).
if [ -n "${CLAWHOST_LINK_KEEP:-}" ]; then cp "$tmp/probe" "$CLAWHOST_LINK_KEEP"; fi
nm --defined-only "$tmp/probe" | awk -v list="$here/hot-functions.txt" -f "$here/hot-names.awk" >"$tmp/order"

extra=(-Wl,--symbol-ordering-file="$tmp/order" -Wl,--no-warn-symbol-ordering)
libc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ print $2 }') || libc=
case "$libc" in
  2.3[6-9]* | 2.[4-9][0-9]* | [3-9].*) extra+=(-Wl,-z,pack-relative-relocs) ;;
esac
"$cc" "$@" "${extra[@]}"
