#!/usr/bin/env python3
"""Benchmark: IR2Vec function embeddings per second, mlgo-env vs llvm-ir2vec.

Side by side, in one run, on the same modules and vocabulary:
  A. `mlgo-env ir2vec embed --jobs=1 M1.bc M2.bc ...`  (one process, all modules)
  B. `llvm-ir2vec embeddings --level=func Mi.bc`        (one process per module,
                                                         as a script would call it)
Both compute function-level symbolic embeddings with LLVM's IR2Vec library.
Rounds alternate A and B to share any machine noise; the median round counts.
Prints functions/second for each and the ratio A/B.

Usage:
  bench/ir2vec.py [--build build] [--corpus DIR | (demo sources)] [--rounds 5]
Without --corpus, the demo corpus sources are compiled to -O0 bitcode
(clang-22 -O0 -Xclang -disable-O0-optnone) in a temporary directory.
"""

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def compile_demo(clang, out_dir):
    sources = sorted(glob.glob(os.path.join(ROOT, "data/demo_corpus/src/*.c")) +
                     glob.glob(os.path.join(ROOT, "data/demo_corpus/src/*.cpp")))
    if not sources:
        sys.exit("bench_ir2vec: no demo sources under data/demo_corpus/src")
    modules = []
    for src in sources:
        bc = os.path.join(out_dir, os.path.splitext(os.path.basename(src))[0] + ".bc")
        subprocess.run([clang, "-O0", "-Xclang", "-disable-O0-optnone", "-emit-llvm", "-c",
                        src, "-o", bc], check=True)
        modules.append(bc)
    return modules


def corpus_modules(corpus):
    import json
    with open(os.path.join(corpus, "corpus_description.json")) as f:
        names = json.load(f)["modules"]
    return [os.path.join(corpus, n + ".bc") for n in names]


def timed(argv, out_path):
    start = time.perf_counter()
    with open(out_path, "wb") as out:
        subprocess.run(argv, stdout=out, stderr=subprocess.PIPE, check=True)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--corpus", help="corpus directory (corpus_description.json + .bc)")
    parser.add_argument("--vocab", default=os.path.join(ROOT, "ir2vec/vocab/demo-75d.json"))
    parser.add_argument("--llvm-ir2vec", default="/usr/lib/llvm-22/bin/llvm-ir2vec")
    parser.add_argument("--clang", default="clang-22")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    mlgo = os.path.join(args.build, "src", "mlgo-env")
    for tool in (mlgo, args.llvm_ir2vec):
        if not os.access(tool, os.X_OK):
            sys.exit(f"bench_ir2vec: {tool} not found (build mlgo-env first)")
    work = tempfile.mkdtemp(prefix="bench-ir2vec-")
    try:
        modules = corpus_modules(args.corpus) if args.corpus else compile_demo(args.clang, work)
        out = os.path.join(work, "out.txt")

        # Count the functions both tools embed (definitions only).
        timed([mlgo, "ir2vec", "embed", "--vocab", args.vocab, "--jobs", "1"] + modules, out)
        with open(out) as f:
            functions = sum(1 for line in f if line.strip() and not line.startswith("#"))
        theirs = 0
        for m in modules:
            timed([args.llvm_ir2vec, "embeddings", "--level=func",
                   f"--ir2vec-vocab-path={args.vocab}", m], out)
            with open(out) as f:
                theirs += sum(1 for line in f if line.startswith("Function: "))
        if theirs != functions:
            sys.exit(f"bench_ir2vec: function counts differ: mlgo-env {functions}, "
                     f"llvm-ir2vec {theirs}")

        ours_s, llvm_s, par_s = [], [], []
        for _ in range(args.rounds):
            ours_s.append(timed([mlgo, "ir2vec", "embed", "--vocab", args.vocab, "--jobs", "1"]
                                + modules, out))
            start = time.perf_counter()
            for m in modules:
                timed([args.llvm_ir2vec, "embeddings", "--level=func",
                       f"--ir2vec-vocab-path={args.vocab}", m], out)
            llvm_s.append(time.perf_counter() - start)
            par_s.append(timed([mlgo, "ir2vec", "embed", "--vocab", args.vocab, "--jobs", "0"]
                               + modules, out))
        ours, llvm, par = (statistics.median(x) for x in (ours_s, llvm_s, par_s))
        print(f"corpus: {len(modules)} modules, {functions} functions; vocabulary {args.vocab}; "
              f"median of {args.rounds} rounds")
        print(f"{'mlgo-env ir2vec embed (1 thread, one process)':<52} {ours:8.3f} s "
              f"{functions / ours:10.1f} functions/s")
        print(f"{'llvm-ir2vec embeddings (one process per module)':<52} {llvm:8.3f} s "
              f"{functions / llvm:10.1f} functions/s")
        print(f"{'mlgo-env ir2vec embed (all cores, one process)':<52} {par:8.3f} s "
              f"{functions / par:10.1f} functions/s")
        print(f"ratio mlgo-env / llvm-ir2vec (1 thread): {llvm / ours:.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
