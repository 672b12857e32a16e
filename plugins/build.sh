#!/usr/bin/env bash
# Build every guest crate in plugins/ into a WebAssembly component and stage
# each as a plugin package: target/plugins/<crate>/{openclaw.plugin.json,plugin.wasm}.
#
# Route used here (no rustup wasm target can be downloaded on these machines):
# Debian's rustc-web 1.96 builds std for wasm32-wasip2 from rust-web-src
# (-Zbuild-std under RUSTC_BOOTSTRAP=1) and links Debian's wasi-libc.
# Elsewhere, with `rustup target add wasm32-wasip2`, set CLAWHOST_GUEST_CARGO=cargo
# to build with the ordinary toolchain instead.
#
# Usage: plugins/build.sh [out-dir]   (default: <repo>/target/plugins)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
out=${1:-$repo/target/plugins}
tdir=$repo/target/guests

if [ "${CLAWHOST_GUEST_CARGO:-}" = cargo ]; then
  env -u CARGO_ENCODED_RUSTFLAGS -u RUSTFLAGS -u CARGO_TARGET_DIR \
    cargo build --manifest-path "$here/Cargo.toml" --release --locked \
      --target wasm32-wasip2 --target-dir "$tdir"
else
  need_install=0
  for f in /usr/bin/cargo /usr/bin/rustc /usr/lib/rustlib/src/rust/library/Cargo.lock \
           /usr/lib/rustlib/x86_64-unknown-linux-gnu/bin/wasm-component-ld \
           /usr/bin/lld-22 /usr/lib/wasm32-wasi/libc.a; do
    [ -e "$f" ] || need_install=1
  done
  if [ "$need_install" = 1 ]; then
    echo "build.sh: installing Debian's rustc-web toolchain for wasm guests" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # rust-web-llvm: wasm-component-ld and the rust-lld link; lld-22: what rust-lld points to
    apt-get install -y -qq --no-install-recommends \
      rustc-web cargo-web rust-web-src rust-web-llvm lld-22 wasi-libc >/dev/null
  fi
  # Debian's cargo/rustc explicitly (rustup's proxies come first in PATH); drop
  # variables an outer cargo (build.rs, cargo test) may have set.
  env -u CARGO_ENCODED_RUSTFLAGS -u RUSTFLAGS -u CARGO_BUILD_TARGET -u CARGO_TARGET_DIR \
      -u RUSTC_WRAPPER -u RUSTC_WORKSPACE_WRAPPER -u RUSTUP_TOOLCHAIN -u CARGO \
      RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1 \
    /usr/bin/cargo build --manifest-path "$here/Cargo.toml" --release --locked \
      --target wasm32-wasip2 -Zbuild-std=std,panic_abort --target-dir "$tdir" \
      --config 'target.wasm32-wasip2.rustflags=["-L","native=/usr/lib/wasm32-wasi"]' >&2
fi

# Copy $1 to $2 unless $2 already holds the same bytes (an unchanged file
# keeps its stamp, so hosts need not rehash it), under a temporary name of
# this process's own: concurrent builds (test binaries run in parallel) never
# move each other's half-copied files.
put() {
  cmp -s "$1" "$2" && return 0
  cp "$1" "$2.tmp.$$" && mv "$2.tmp.$$" "$2"
}

# Stage package $1 from its manifest $2 and component $3.
stage() {
  mkdir -p "$out/$1"
  put "$2" "$out/$1/openclaw.plugin.json"
  put "$3" "$out/$1/plugin.wasm"
}

# Whether the build in dir $1 is missing or was made from other sources than hash $2.
stale() {
  [ ! -f "$1/plugin.wasm" ] || [ "$(cat "$1.srchash" 2>/dev/null)" != "$2" ]
}

for manifest in "$here"/*/openclaw.plugin.json; do
  [ -f "$(dirname "$manifest")/Cargo.toml" ] || continue   # not a Rust guest
  crate=$(basename "$(dirname "$manifest")")
  wasm="$tdir/wasm32-wasip2/release/${crate//-/_}.wasm"
  [ -f "$wasm" ] || { echo "build.sh: $wasm was not built" >&2; exit 1; }
  stage "$crate" "$manifest" "$wasm"
done
# Python plugins (plugins/py-*): the Python SDK (sdk/python) with componentize-py.
# A build is not byte-reproducible, so a package is rebuilt only when its
# sources, the SDK or componentize-py changed (a new sha256 at every build
# would also recompile the component in every host cache).
componentize_py_version=0.25.1
if ls "$here"/py-*/app.py >/dev/null 2>&1; then
  if ! componentize-py --version 2>/dev/null | grep -q "$componentize_py_version"; then
    echo "build.sh: installing componentize-py $componentize_py_version from PyPI" >&2
    python3 -m pip install --quiet --disable-pip-version-check "componentize-py==$componentize_py_version" >&2
  fi
  sdk_py=$repo/sdk/python/clawhost_sdk
  for app in "$here"/py-*/app.py; do
    dir=$(dirname "$app")
    crate=$(basename "$dir")
    built=$tdir/python/$crate
    hash=$(cat "$dir"/*.py "$dir/openclaw.plugin.json" "$sdk_py"/*.py "$sdk_py"/wit/*.wit \
             <(componentize-py --version) | sha256sum | cut -d' ' -f1)
    if stale "$built" "$hash"; then
      echo "build.sh: building $crate (Python)" >&2
      python3 "$sdk_py/build.py" build "$dir" --out "$built" >&2
      echo "$hash" > "$built.srchash"
    fi
    stage "$crate" "$built/openclaw.plugin.json" "$built/plugin.wasm"
  done
fi
# JavaScript plugins (plugins/js-*): the JS SDK (sdk/js) with jco's QuickJS
# backend; rebuilt only when their sources, the SDK or its lockfile changed.
if ls "$here"/js-*/app.js >/dev/null 2>&1; then
  sdk_js=$repo/sdk/js
  if [ ! -d "$sdk_js/node_modules/@bytecodealliance/jco" ]; then
    echo "build.sh: installing the JS SDK's dependencies (npm ci)" >&2
    (cd "$sdk_js" && npm ci --silent --no-audit --no-fund) >&2
  fi
  for app in "$here"/js-*/app.js; do
    dir=$(dirname "$app")
    crate=$(basename "$dir")
    built=$tdir/js/$crate
    hash=$(cat "$dir"/*.js "$dir/openclaw.plugin.json" "$sdk_js"/src/*.js "$sdk_js/build.mjs" \
             "$sdk_js/package-lock.json" "$sdk_js"/wit/*.wit | sha256sum | cut -d' ' -f1)
    if stale "$built" "$hash"; then
      echo "build.sh: building $crate (JavaScript)" >&2
      node "$sdk_js/build.mjs" build "$dir" --out "$built" >&2
      echo "$hash" > "$built.srchash"
    fi
    stage "$crate" "$built/openclaw.plugin.json" "$built/plugin.wasm"
  done
fi
echo "$out"
