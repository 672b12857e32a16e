"""``clawhost-py build``: a plugin package directory (your module and its
``openclaw.plugin.json``) into a loadable package (``plugin.wasm`` and the
manifest), with componentize-py."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SDK_DIR = Path(__file__).resolve().parent
WIT_DIR = SDK_DIR / "wit"
API_VERSION = "0.2.3"


def build(package: Path, out: Path, module: str) -> Path:
    """Build ``package`` into ``out``; returns the component's path."""
    manifest_path = package / "openclaw.plugin.json"
    if not manifest_path.is_file():
        raise SystemExit(f"{manifest_path} is missing: a plugin package needs its manifest")
    manifest = json.loads(manifest_path.read_text())
    declared = str(manifest.get("apiVersion", ""))
    if not declared.startswith("0.2."):
        raise SystemExit(
            f"{manifest_path}: apiVersion is {declared!r}; this SDK builds API {API_VERSION}"
        )
    if not (package / f"{module}.py").is_file():
        raise SystemExit(f"{package / (module + '.py')} is missing (use --module to name another)")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        entry = Path(tmp) / "_clawhost_entry.py"
        entry.write_text(
            f"import {module}  # noqa: F401  (registers the tools and hooks)\n"
            "from clawhost_sdk._exports import *  # noqa: F401,F403\n"
        )
        wasm = out / "plugin.wasm"
        partial = out / "plugin.wasm.partial"
        # componentize-py of this interpreter's environment, on PATH or not.
        cmd = [
            sys.executable,
            "-c",
            "import sys; from componentize_py import script; sys.argv[0] = 'componentize-py'; sys.exit(script())",
            "-d", str(WIT_DIR),
            "-w", "plugin",
            "componentize", "_clawhost_entry",
            "-p", tmp,
            "-p", str(package),
            "-p", str(SDK_DIR.parent),
            "-o", str(partial),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            sys.stderr.write(done.stdout + done.stderr)
            raise SystemExit(f"componentize-py failed for {package}")
        partial.replace(wasm)
    if (out / "openclaw.plugin.json").resolve() != manifest_path.resolve():
        shutil.copyfile(manifest_path, out / "openclaw.plugin.json")
    return wasm


def main() -> None:
    """The command line."""
    parser = argparse.ArgumentParser(prog="clawhost-py")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build a plugin package into plugin.wasm")
    b.add_argument("package", type=Path, help="the package directory")
    b.add_argument("--out", type=Path, help="output directory (default: the package)")
    b.add_argument("--module", default="app", help="the plugin module (default: app)")
    args = parser.parse_args()
    wasm = build(args.package, args.out or args.package, args.module)
    print(wasm)


if __name__ == "__main__":
    main()
