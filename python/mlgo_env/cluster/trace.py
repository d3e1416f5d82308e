"""Default-policy traces through a task runner: `mlgo-env trace` shards as tasks, merged.

    python -m mlgo_env.cluster.trace --problem=inlining --corpus=DIR --output=trace.log \\
        [--scheduler=ADDRESS|local[:N]] [--shards=K] [--sampling-rate=R] [--seed=S]

Without --scheduler this is `mlgo-env trace --jobs=N` run here (today's path). With one,
the sample is cut into shards (``mlgo-env trace --shard=K/N``: every N-th module of the
trace order), each shard is a task that traces with one compiler on a worker and returns
its bytes, and the shards are merged back into the trace order of the unsharded run:
the same file, byte for byte, as the local command writes (and the same CSV). A lost
worker's shards run again elsewhere; modules that fail are listed once, by name, and
left out, as `mlgo-env trace` does. Memory bound: the client holds the whole trace once
while merging.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from ..files import write_atomic
from ..trace_log import read_header, read_records
from .progress import Progress
from .runner import Failure, TaskRunner
from .tasks import ShardJob, ShardResult, selection_task, trace_shard_task


@dataclass
class TraceSummary:
    output: str
    modules: int = 0               # modules in the merged trace's CSV
    observations: int = 0
    shards: int = 1
    failed: list[str] = field(default_factory=list)  # "module: message", once each
    report: str = ""               # the local command's own report (local path only)


def trace_arguments(problem: str, corpus: str, seed: int, sampling_rate: float,
                    cache_dir: Optional[str], extra: Sequence[str] = ()) -> list[str]:
    args = [f"--problem={problem}", f"--corpus={os.path.abspath(corpus)}", f"--seed={seed}",
            f"--sampling-rate={sampling_rate}"]
    if cache_dir:
        args.append(f"--cache-dir={os.path.abspath(cache_dir)}")
    return args + list(extra)


def run_trace(runner: TaskRunner, mlgo_env: str, problem: str, corpus: str, output: str,
              seed: int, sampling_rate: float, cache_dir: Optional[str] = None,
              shards: Optional[int] = None, extra: Sequence[str] = (),
              progress: Optional[Progress] = None) -> TraceSummary:
    """Writes OUTPUT and OUTPUT.csv, the default trace of the corpus sample. On a local
    runner: one `mlgo-env trace --jobs=<slots>`. Otherwise `shards` shard tasks (default
    4 per worker thread, but at least 4 modules per shard). RuntimeError when the trace cannot be
    made at all (bad options, clang unusable, a shard failing on every worker)."""
    args = trace_arguments(problem, corpus, seed, sampling_rate, cache_dir, extra)
    if runner.local:
        return _local_trace(mlgo_env, args, output, runner.slots)
    (modules,) = runner.map(selection_task, [(mlgo_env, args)], ["trace selection"], False)
    if isinstance(modules, Failure):
        raise RuntimeError(f"cannot select the modules to trace: {modules.message}")
    # Default: 4 shards per worker thread (a lost worker loses little, stragglers are
    # short), but at least 4 modules per shard (each shard starts mlgo-env and probes clang).
    count = max(1, min(shards or min(4 * runner.slots, -(-len(modules) // 4)), len(modules)))
    jobs = [ShardJob(mlgo_env, k, count, tuple(args)) for k in range(count)]
    results: list[Any] = runner.map(trace_shard_task, jobs,
                                    [f"shard {k}/{count}" for k in range(count)], False,
                                    progress)
    lost = [r for r in results if isinstance(r, Failure)]
    if lost:
        raise RuntimeError("trace shard(s) failed: " + "; ".join(map(str, lost)))
    summary = merge_shards(results, modules, output)
    summary.shards = count
    return summary


def _local_trace(mlgo_env: str, args: list[str], output: str, jobs: int) -> TraceSummary:
    cmd = [mlgo_env, "trace", *args, f"--output={output}", f"--jobs={jobs}", "--no-progress"]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode not in (0, 3):
        raise RuntimeError(f"mlgo-env trace failed ({proc.returncode}):\n{proc.stdout[-2000:]}")
    with open(output, "rb") as f:
        _, chunks, observations = split_trace(f.read())
    failed = _failed_lines(proc.stdout)
    with open(output + ".csv", encoding="utf-8") as f:
        modules = {line.split(",", 1)[0] for line in f.read().splitlines()[1:] if line}
    return TraceSummary(output, len(modules), observations, 1, failed, proc.stdout)


def _failed_lines(report: str) -> list[str]:
    return [line.strip()[len("failed: "):] for line in report.splitlines()
            if line.strip().startswith("failed: ")]


def split_trace(data: bytes) -> tuple[bytes, list[tuple[str, bytes]], int]:
    """(header line with its newline, [(context, the context's records)], observations)
    of a TrainingLogger stream; TraceError naming the offset when it is corrupt."""
    header = read_header(data)
    chunks: list[tuple[str, bytes]] = []
    start, context, observations = -1, "", 0
    for record in read_records(data, header):
        if record.kind == "context":
            if start >= 0:
                chunks.append((context, data[start:record.offset]))
            start, context = record.offset, record.context
        observations += record.kind == "observation"
    if start >= 0:
        chunks.append((context, data[start:]))
    return data[:header.end], chunks, observations


def merge_shards(shards: Sequence[ShardResult], order: Sequence[str], output: str
                 ) -> TraceSummary:
    """Writes the shards' traces and CSVs as one, modules in `order` (the unsharded trace
    order); atomically (temporary files renamed over OUTPUT and OUTPUT.csv)."""
    header: Optional[bytes] = None
    csv_header: Optional[str] = None
    records: dict[str, list[bytes]] = {}
    rows: dict[str, list[str]] = {}
    failed: list[str] = []
    observations = 0
    for shard in sorted(shards, key=lambda s: s.index):
        lines = shard.csv.decode("utf-8").splitlines()
        if csv_header is None:
            csv_header = lines[0]
        elif lines and lines[0] != csv_header:
            raise RuntimeError(f"shard {shard.index}'s CSV has another header")
        module_of: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                module, context = _csv_module_context(line)
                module_of[context] = module
                rows.setdefault(module, []).append(line)
        head, chunks, count = split_trace(shard.trace)
        if header is None:
            header = head
        elif head != header:
            raise RuntimeError(f"shard {shard.index}'s trace has another header")
        observations += count
        for context, chunk in chunks:
            if context not in module_of:
                raise RuntimeError(f"shard {shard.index}: context '{context}' is not in its CSV")
            records.setdefault(module_of[context], []).append(chunk)
        failed += _failed_lines(shard.report)
    if header is None or csv_header is None:
        raise RuntimeError("no trace shard came back")
    write_atomic(output, [header] + [c for m in order for c in records.get(m, [])])
    write_atomic(output + ".csv", [(line + "\n").encode() for line in
                                 [csv_header] + [r for m in order for r in rows.get(m, [])]])
    return TraceSummary(output, sum(m in rows for m in order), observations, len(shards), failed)


def _csv_module_context(line: str) -> tuple[str, str]:
    import csv
    fields = next(csv.reader([line]))
    return fields[0], fields[1]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    from . import add_arguments
    p = argparse.ArgumentParser(prog="python -m mlgo_env.cluster.trace", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--problem", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sampling-rate", type=float, default=1.0)
    p.add_argument("--cache-dir")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 2,
                   help="compilers at once without --scheduler")
    p.add_argument("--shards", type=int, help="with --scheduler: shard tasks (default 4 per "
                                              "worker thread)")
    p.add_argument("--mlgo-env", help="the mlgo-env executable (a path every worker sees)")
    add_arguments(p)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    from . import find_mlgo_env, open_runner
    a = parse_args(argv)
    try:
        exe = find_mlgo_env(a.mlgo_env)
        with open_runner(a.scheduler, None, a.workers, a.corpus) as runner:
            summary = run_trace(runner, exe, a.problem, a.corpus, a.output, a.seed,
                                a.sampling_rate, a.cache_dir, a.shards,
                                progress=Progress("trace shards"))
    except (ValueError, RuntimeError, FileNotFoundError) as e:
        print(f"trace: error: {e}", file=sys.stderr)
        return 2
    if summary.report:
        print(summary.report, end="")
    else:
        print(f"trace: {summary.modules} modules, {summary.observations} observations in "
              f"{summary.shards} shards -> {summary.output} (+ .csv)")
        for line in summary.failed:
            print(f"  failed: {line}")
    return 3 if summary.failed else 0


if __name__ == "__main__":
    sys.exit(main())
