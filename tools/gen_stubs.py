"""Generates the Python gRPC stubs (with .pyi types) from protos/.

The stubs under chunklab/v1/ are written only by this module (`make stubs`);
a test regenerates them into a temporary folder and fails when they differ.
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

from grpc_tools import protoc

REPO = Path(__file__).resolve().parent.parent
PROTO_ROOT = REPO / "protos"
PACKAGE_DIR = Path("chunklab") / "v1"


def proto_files() -> list[Path]:
    return sorted((PROTO_ROOT / PACKAGE_DIR).glob("*.proto"))


def generate(out_dir: Path) -> list[Path]:
    """Compiles every proto into out_dir/chunklab/v1 and returns the files written."""
    well_known = resources.files("grpc_tools") / "_proto"
    target = out_dir / PACKAGE_DIR
    target.mkdir(parents=True, exist_ok=True)
    for stale in target.glob("*_pb2*.py*"):
        stale.unlink()
    args = [
        "grpc_tools.protoc",
        f"-I{PROTO_ROOT}",
        f"-I{well_known}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        *(str(p.relative_to(PROTO_ROOT)) for p in proto_files()),
    ]
    if protoc.main(args) != 0:
        raise RuntimeError("protoc failed to compile protos/chunklab/v1 (see the messages above)")
    init = target / "__init__.py"
    init.write_text('"""Generated from protos/chunklab/v1 by `make stubs`; do not edit."""\n')
    return sorted(p for p in target.iterdir() if p.is_file())


def main() -> int:
    written = generate(REPO)
    print(f"generated {len(written)} files in {REPO / PACKAGE_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
