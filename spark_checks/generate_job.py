"""`kfc generate --spark`: seed ranges as Spark tasks, output byte-identical to the single-process
generator.

    generate_with_spark(count, seed, "c.parquet")  -> {"path", "format", "count", "bytes", ...}

Each task writes a part file (same writer options as the single-process generator) into a staging
directory next to the output, and the driver concatenates the parts in range order -- JSON Lines byte
for byte, Parquet re-chunked into row groups of `row_group_size` rows -- so `--spark` output is
byte-identical to `kfc generate` without it.  The driver streams one row group at a time.  On a real
cluster the output directory must be on a filesystem the executors share.
"""

from __future__ import annotations

import math
import os
import shutil
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.corpus import DEFAULT_ROW_GROUP_SIZE, CorpusError, format_of

from .progress import Progress
from .session import SparkJobError, SparkRun, one_line

GEN_ROWS_PER_TASK = 1000  # generation is ~5x slower per trace than replay


def _split(count: int, parts: int) -> list[tuple[int, int]]:
    step = math.ceil(count / parts) if parts else count
    return [(a, min(count, a + step)) for a in range(0, count, step)] if count else []


def generate_part(seed: int, profile: Any, fmt: str, staging: str, item: tuple[int, tuple[int, int]]) -> int:
    """Runs in a Python worker: traces start..stop-1 to staging/part-NNNNN (atomic rename, so a
    retried or speculative attempt leaves one complete file)."""
    from conformance.corpus import dumps, trace_row, write_rows
    from conformance.generate import generate_range

    index, (start, stop) = item
    final = Path(staging) / f"part-{index:05d}.{fmt}"
    tmp = final.with_name(f".{final.name}.{uuid.uuid4().hex}")
    traces = generate_range(seed, start, stop, profile)
    if fmt == "jsonl":
        with tmp.open("w", encoding="utf-8", newline="\n") as f:
            for t in traces:
                f.write(dumps(t) + "\n")
    else:
        cols = ("trace_id", "profile", "n_steps", "ops", "body")
        write_rows((tuple(trace_row(t)[c] for c in cols) for t in traces), tmp)  # type: ignore[misc]
    os.replace(tmp, final)
    return stop - start


def _merge_parquet(parts: list[Path], dest: Path, row_group_size: int) -> None:
    """Concatenate part files into row groups of exactly `row_group_size` rows, in order, with the
    single-process writer's options (so the bytes equal `kfc generate` without --spark)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from conformance.corpus import _arrow_schema, _parquet_writer

    schema = _arrow_schema()
    writer = _parquet_writer(dest)
    pending: list[Any] = []
    n = 0

    def emit(table: Any) -> None:
        batch = pa.RecordBatch.from_arrays([table.column(i).combine_chunks() for i in range(table.num_columns)],
                                           schema=schema)
        writer.write_batch(batch, row_group_size=row_group_size)

    try:
        for part in parts:
            for batch in pq.ParquetFile(str(part)).iter_batches(batch_size=row_group_size):
                pending.append(batch)
                n += batch.num_rows
                while n >= row_group_size:
                    table = pa.Table.from_batches(pending, schema=batch.schema)
                    emit(table.slice(0, row_group_size))
                    rest = table.slice(row_group_size)
                    pending = rest.to_batches() if rest.num_rows else []
                    n = rest.num_rows
        if n:
            emit(pa.Table.from_batches(pending))
    finally:
        writer.close()


def _concat(parts: list[Path], dest: Path, fmt: str, row_group_size: int) -> None:
    tmp = dest.with_name(f".{dest.name}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        if fmt == "jsonl":
            with tmp.open("wb") as dst:
                for p in parts:
                    with p.open("rb") as src:
                        shutil.copyfileobj(src, dst, 1 << 20)
        else:
            _merge_parquet(parts, tmp, row_group_size)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def _generate_on(run: SparkRun, count: int, seed: int, fmt: str, profile: str | Sequence[str] | None,
                 staging: Path) -> list[tuple[int, tuple[int, int]]]:
    """The job itself, on a started run: every part file written into `staging`; the ranges returned."""
    tasks = max(2 * run.parallelism, math.ceil(count / GEN_ROWS_PER_TASK))
    ranges = list(enumerate(_split(count, tasks)))
    prof = list(profile) if profile is not None and not isinstance(profile, str) else profile
    group = f"kfc-generate-{uuid.uuid4().hex[:8]}"
    run.sc.setJobGroup(group, f"kfc generate {count} traces")
    where = str(staging.resolve())
    with Progress(run.sc, group, f"generate {count} traces ({len(ranges)} tasks)", True):
        try:
            with run.interrupt_guard():
                written = run.sc.parallelize(ranges, max(1, len(ranges))).map(
                    lambda item, s=seed, p=prof, f=fmt, d=where: generate_part(s, p, f, d, item)
                ).sum()
        except Exception as e:  # noqa: BLE001 - a failed job: one line, not the JVM's stack trace
            raise SparkJobError(f"the Spark job failed: {type(e).__name__}: {one_line(e)}") from None
    if written != count:
        raise SparkJobError(f"generation wrote {written} traces, expected {count}")
    return ranges


def generate_with_spark(count: int, seed: int, out: str | Path, fmt: str | None = None,
                        profile: str | Sequence[str] | None = None, master: str | None = None, *,
                        row_group_size: int | None = None, spark: SparkRun | None = None) -> dict[str, Any]:
    """`kfc generate --spark`: seed ranges as Spark tasks, output identical to the single-process
    generator.  Returns {"path", "format", "count", "bytes", "seconds", "traces_per_s", "tasks"}."""
    from conformance.generate import check_profiles

    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    out_p = Path(out)
    fmt = format_of(out_p, fmt)
    check_profiles(profile)  # an unknown profile fails here, not in every task
    rgs = row_group_size or DEFAULT_ROW_GROUP_SIZE
    if out_p.is_dir():
        raise CorpusError(f"{out_p}: is a directory; give a file path")
    out_p.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    own = spark is None
    run = spark or SparkRun(master or "local[*]", app_name="kfc generate")
    staging = out_p.parent / f".{out_p.name}.parts-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    try:
        if own:
            run.start()
        with run.interrupt_guard():
            ranges = _generate_on(run, count, seed, fmt, profile, staging)
        _concat([staging / f"part-{i:05d}.{fmt}" for i, _ in ranges], out_p, fmt, rgs)
    finally:
        if own:  # first: no task may still be writing into the staging directory
            run.stop()
        shutil.rmtree(staging, ignore_errors=True)
    seconds = time.perf_counter() - t0
    return {"path": str(out_p), "format": fmt, "count": count, "bytes": out_p.stat().st_size,
            "seconds": round(seconds, 3), "traces_per_s": round(count / seconds, 1) if seconds > 0 else None,
            "tasks": len(ranges)}


__all__ = ["generate_part", "generate_with_spark"]
