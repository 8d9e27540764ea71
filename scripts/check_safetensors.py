#!/usr/bin/env python3
"""Prints what a checkpoint holds, read by the reference `safetensors` package rather
than by normlab, so a file that loads here is known to follow the format and not just
to agree with our own reader. Developer-side only; no make target runs it.

Usage: scripts/check_safetensors.py FILE.safetensors [--values N]
Needs: pip install safetensors numpy
"""
import argparse
import sys

try:
    import numpy as np
    from safetensors import safe_open
    from safetensors.numpy import load_file
except ImportError as e:
    sys.exit(f"check_safetensors: {e.name} is missing: pip install safetensors numpy")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--values", type=int, default=4, metavar="N",
                    help="print the first N values of each tensor (default 4, 0 for none)")
    args = ap.parse_args()

    tensors = load_file(args.file)
    with safe_open(args.file, framework="numpy") as f:
        metadata = f.metadata() or {}

    print(f"{args.file}: {len(tensors)} tensors, "
          f"{sum(t.nbytes for t in tensors.values())} bytes of data")
    for name in sorted(tensors):
        t = tensors[name]
        line = f"  {name}  {t.dtype}  {tuple(t.shape)}"
        if args.values > 0:
            line += "  " + np.array2string(t.reshape(-1)[: args.values], separator=", ")
        print(line)
    print(f"metadata: {len(metadata)} entries")
    for key in sorted(metadata):
        print(f"  {key} = {metadata[key]!r}")


if __name__ == "__main__":
    main()
