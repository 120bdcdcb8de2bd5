#!/usr/bin/env python3
"""Regenerates the checked-in protobuf classes from the repository's ``proto/``.

    python3 sdk/python/gen_proto.py          # rewrite voice_brain/proto/*_pb2.py
    python3 sdk/python/gen_proto.py --check  # exit 1 if they differ from a fresh protoc run

Runs Debian's ``protoc`` (package protobuf-compiler) and makes one change to its output: the
generated ``from voice.v1 import config_pb2`` becomes a relative import, so the classes live
inside the ``voice_brain`` package instead of claiming a top-level ``voice`` package.
"""

import argparse
import difflib
import pathlib
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
PROTO_ROOT = HERE.parent.parent / "proto"
OUT = HERE / "voice_brain" / "proto"
FILES = ["voice/v1/config.proto", "voice/v1/brain.proto"]
ABSOLUTE_IMPORT = "from voice.v1 import "


def generate() -> dict:
    """Runs protoc on FILES and returns {module file name: source}, imports made relative."""
    protoc = shutil.which("protoc")
    if not protoc:
        sys.exit("protoc is missing: apt-get install protobuf-compiler")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [protoc, f"--proto_path={PROTO_ROOT}", f"--python_out={tmp}", *FILES], check=True
        )
        out = {}
        for f in FILES:
            name = pathlib.Path(f).stem + "_pb2.py"
            text = (pathlib.Path(tmp) / pathlib.Path(f).with_name(name)).read_text()
            out[name] = text.replace(ABSOLUTE_IMPORT, "from . import ")
        return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument("--out", type=pathlib.Path, default=OUT, help=argparse.SUPPRESS)
    args = parser.parse_args()
    fresh = generate()
    stale = []
    for name, text in fresh.items():
        path = args.out / name
        current = path.read_text() if path.exists() else ""
        if current == text:
            continue
        if args.check:
            stale.append(name)
            diff = difflib.unified_diff(
                current.splitlines(), text.splitlines(), f"checked-in/{name}", f"protoc/{name}",
                lineterm="", n=1,
            )
            print("\n".join(list(diff)[:40]), file=sys.stderr)
        else:
            path.write_text(text)
            print(f"wrote {path}")
    if stale:
        verb = "is" if len(stale) == 1 else "are"
        print(
            f"{', '.join(stale)} {verb} not what protoc makes of proto/ today: "
            "run python3 sdk/python/gen_proto.py",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
