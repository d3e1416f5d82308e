#!/usr/bin/env python3
"""Benchmark: `mlgo-env corpus extract` against llvm-objcopy --dump-section.

Both methods extract the .llvmbc/.llvmcmd sections of the same object files
with the same number of parallel workers, in one run, side by side:

  in-process   one `mlgo-env corpus extract --input_type=directory` run
               (process start-up, listing, writing the corpus included);
  in-process, compile_commands.json
               one `corpus extract` run over a compile database whose entries
               run in a source directory and write each object to an absolute
               path elsewhere (the layout of a real build's database);
  objcopy x1   one `llvm-objcopy --dump-section=.llvmbc=.. --dump-section=.llvmcmd=..`
               process per object (the cheapest form of the objcopy method);
  objcopy x2   two processes per object, one per section, as mlgo-utils'
               extract_ir.py runs them.

The objects are the demo corpus objects of a build tree, copied --copies times
to get a realistic count. Each method runs --repeat times (interleaved); the
median wall time is reported, with the ratio objcopy / in-process. Outputs are
checked to be byte-identical across methods.

Usage: bench/corpus_extract.py [--build-dir build] [--copies 5]
       [--workers N] [--repeat 3] [--objcopy llvm-objcopy-22]
"""
import argparse
import concurrent.futures
import filecmp
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def parse_args():
    here = pathlib.Path(__file__).resolve().parent.parent
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build-dir", type=pathlib.Path, default=here / "build")
    p.add_argument("--copies", type=int, default=5)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--objcopy", default=shutil.which("llvm-objcopy-22") or "llvm-objcopy")
    return p.parse_args()


def collect_objects(build_dir):
    objects = []
    for variant in ("O2", "Oz"):
        objects += sorted((build_dir / "corpus" / "demo" / f"obj-{variant}").glob("*.o"))
    return objects


def stage(objects, copies, root):
    staged = []
    for c in range(copies):
        for obj in objects:
            target = root / f"copy{c}" / obj.parent.name / obj.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(obj, target)
            staged.append(target)
    return staged


def run_in_process(mlgo_env, objs_dir, out_dir, workers):
    shutil.rmtree(out_dir, ignore_errors=True)
    start = time.perf_counter()
    subprocess.run([str(mlgo_env), "corpus", "extract", f"--input={objs_dir}",
                    "--input_type=directory", f"--output_dir={out_dir}",
                    f"--num_workers={workers}"], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def write_database(staged, objs_dir, root):
    """A compile_commands.json naming every staged object by an absolute -o,
    its entries running in a source directory outside the objects' tree."""
    source_dir = root / "src"
    source_dir.mkdir(exist_ok=True)
    entries = [{"directory": str(source_dir),
                "arguments": ["clang-22", "-Oz", "-c", f"{obj.stem}.c", "-o", str(obj)],
                "file": f"{obj.stem}.c"} for obj in staged]
    database = root / "compile_commands.json"
    database.write_text(json.dumps(entries))
    return database


def run_in_process_json(mlgo_env, database, objs_dir, out_dir, workers):
    shutil.rmtree(out_dir, ignore_errors=True)
    start = time.perf_counter()
    subprocess.run([str(mlgo_env), "corpus", "extract", f"--input={database}",
                    "--input_type=json", f"--obj_base_dir={objs_dir}", f"--output_dir={out_dir}",
                    f"--num_workers={workers}"], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def run_objcopy(objcopy, staged, objs_dir, out_dir, workers, per_section):
    shutil.rmtree(out_dir, ignore_errors=True)

    def one(obj):
        rel = obj.relative_to(objs_dir)
        dest = out_dir / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        bc, cmd = f"{dest}.bc", f"{dest}.cmd"
        if per_section:
            for section, path in ((".llvmcmd", cmd), (".llvmbc", bc)):
                subprocess.run([objcopy, f"--dump-section={section}={path}", str(obj),
                                "/dev/null"], check=True)
        else:
            subprocess.run([objcopy, f"--dump-section=.llvmbc={bc}",
                            f"--dump-section=.llvmcmd={cmd}", str(obj), "/dev/null"],
                           check=True)

    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(one, staged))
    return time.perf_counter() - start


def same_outputs(staged, objs_dir, a, b):
    for obj in staged:
        rel = obj.relative_to(objs_dir)
        for suffix in (".bc", ".cmd"):
            if not filecmp.cmp(f"{a / rel}{suffix}", f"{b / rel}{suffix}", shallow=False):
                return False
    return True


def main():
    args = parse_args()
    mlgo_env = args.build_dir / "src" / "mlgo-env"
    objects = collect_objects(args.build_dir)
    if not mlgo_env.exists() or not objects:
        sys.exit(f"build {args.build_dir} first (needs src/mlgo-env and the demo corpus objects)")
    with tempfile.TemporaryDirectory(prefix="mlgo-bench-extract-") as tmp:
        tmp = pathlib.Path(tmp)
        objs_dir = tmp / "objs"
        staged = stage(objects, args.copies, objs_dir)
        database = write_database(staged, objs_dir, tmp)
        total_bytes = sum(o.stat().st_size for o in staged)
        print(f"{len(staged)} objects ({total_bytes / 2**20:.1f} MiB), {args.workers} workers, "
              f"median of {args.repeat} runs; objcopy = {args.objcopy}")
        methods = {
            "in-process (mlgo-env corpus extract)":
                lambda: run_in_process(mlgo_env, objs_dir, tmp / "out-inproc", args.workers),
            "in-process, compile_commands.json":
                lambda: run_in_process_json(mlgo_env, database, objs_dir, tmp / "out-json", args.workers),
            "objcopy x1 (one process per object)":
                lambda: run_objcopy(args.objcopy, staged, objs_dir, tmp / "out-objcopy1",
                                    args.workers, per_section=False),
            "objcopy x2 (one process per section, mlgo-utils)":
                lambda: run_objcopy(args.objcopy, staged, objs_dir, tmp / "out-objcopy2",
                                    args.workers, per_section=True),
        }
        times = {name: [] for name in methods}
        for _ in range(args.repeat):
            for name, method in methods.items():
                times[name].append(method())
        for other in ("out-json", "out-objcopy1", "out-objcopy2"):
            if not same_outputs(staged, objs_dir, tmp / "out-inproc", tmp / other):
                sys.exit(f"outputs differ between in-process and {other}")
        medians = {name: statistics.median(t) for name, t in times.items()}
        base = medians["in-process (mlgo-env corpus extract)"]
        for name, median in medians.items():
            rate = len(staged) / median
            print(f"  {name:52s} {median * 1000:9.1f} ms  {rate:8.0f} objects/s")
        names = list(medians)
        json_base = medians[names[1]]
        print(f"ratio objcopy x1 / in-process: {medians[names[2]] / base:.1f}x "
              f"(from compile_commands.json: {medians[names[2]] / json_base:.1f}x)")
        print(f"ratio objcopy x2 / in-process: {medians[names[3]] / base:.1f}x "
              f"(from compile_commands.json: {medians[names[3]] / json_base:.1f}x)")


if __name__ == "__main__":
    main()
