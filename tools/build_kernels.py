"""Compile recorded kernel module specs ahead of time (gbla/_prebuilt.py).

    GBLA_KERNEL_SPECS=specs gbla warmup          # on a GPU machine: what the methods load
    python tools/build_kernels.py specs --out prebuilt --arch 80 90 100 --ptx 80 --jobs 16
    GBLA_PREBUILT=prebuilt gbla bfs ...          # loaded without NVRTC
    python tools/build_kernels.py --pack prebuilt --into gbla/kernels/prebuilt --cupy 14.2.0

Each spec (``KEY.json``, written by the hook on CuPy's compiler where ``GBLA_KERNEL_SPECS``
names a folder) is compiled by NVRTC (cuda-bindings) for every architecture asked, a process per
spec at a time (a spec of CuPy's own kernels needs that CuPy's headers: build where it is
installed). ``--clean`` empties the output folder first (the package's kernels/prebuilt holds
only what the current code loads). Prints what it wrote and the seconds it took; exits 1 if a
spec failed to compile. ``--pack FOLDER --into DEST`` packs a folder of built modules as the
package ships them (gbla/kernels/prebuilt: an xz archive per target and index.json).
"""

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from gbla import _prebuilt


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("specs", type=Path, nargs="?", help="the folder GBLA_KERNEL_SPECS named")
    p.add_argument("--out", type=Path, help="where the cubins go")
    p.add_argument("--arch", nargs="+", default=["80", "90", "100"], help="sm_XX to build")
    p.add_argument("--ptx", help="also PTX for this virtual architecture (newer GPUs)")
    p.add_argument("--jobs", type=int, default=1, help="specs compiled at once (processes)")
    p.add_argument("--clean", action="store_true", help="empty the output folder first")
    p.add_argument("--pack", type=Path, help="pack this folder of built modules instead")
    p.add_argument("--into", type=Path, help="where --pack writes (the package's folder)")
    p.add_argument("--cupy", help="the CuPy version the modules were recorded with")
    args = p.parse_args(argv)
    if args.pack is not None:
        if args.into is None or args.cupy is None:
            p.error("--pack needs --into and --cupy")
        index = _prebuilt.pack(args.pack, args.into, args.cupy)
        for facts in index["archives"].values():
            size = (args.into / facts["file"]).stat().st_size
            print(f"{facts['file']}: {facts['modules']} modules, {size / 1e6:.2f} MB")
        return 0
    if args.specs is None or args.out is None:
        p.error("name the specs folder and --out (or --pack)")
    if args.clean and args.out.is_dir():
        for old in args.out.iterdir():
            if old.suffix in (".cubin", ".ptx", ".json"):
                old.unlink()
    specs = sorted(args.specs.glob("*.json"))
    if not specs:
        print(f"no spec in {args.specs}", file=sys.stderr)
        return 1
    t0, failed, files = time.perf_counter(), 0, 0

    def report(spec, outcome):
        nonlocal failed, files
        try:
            written = outcome()
        except Exception as e:  # noqa: BLE001 (reported, the others go on)
            failed += 1
            print(f"FAILED {spec.name}: {e}", file=sys.stderr)
            return
        files += len(written)
        print(f"{spec.name}: {len(written)} files", flush=True)

    if args.jobs <= 1:
        for spec in specs:
            report(spec, lambda spec=spec: _prebuilt.build(spec, args.out, args.arch, ptx=args.ptx))
    else:  # NVRTC compiles one program at a time in a process
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            jobs = {
                pool.submit(_prebuilt.build, s, args.out, args.arch, ptx=args.ptx): s for s in specs
            }
            for job in as_completed(jobs):
                report(jobs[job], job.result)
    print(
        f"{len(specs)} specs, {files} files, {failed} failed, "
        f"{time.perf_counter() - t0:.1f} s for sm_{', sm_'.join(args.arch)}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
