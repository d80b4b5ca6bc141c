"""Trace corpora on disk: JSON Lines (small) and Parquet (large), streamed both ways.

JSON Lines: one trace per line, canonical JSON (sorted keys, no spaces, UTF-8), "\\n" after each.

Parquet (one row per trace, row groups of `row_group_size` rows):

    trace_id  string        the trace's "id"
    profile   string        the trace's "profile"
    n_steps   int32         len(steps)
    ops       list<string>  distinct ops of the steps, sorted (lets Spark filter without parsing)
    body      string        the trace as canonical JSON (the same text as a JSONL line)

Key-value metadata `kfc.corpus = kfc-trace-corpus/1` marks a file as ours.  Writer options are
pinned (compression, page sizes, statistics, format version) so the same traces give the same bytes.

Reading never drops a row: every row comes back as a `CorpusRow`, either with its parsed trace or
with an input error naming the row's trace id (or its line / row number when it has none).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from .model import trace_problems

FORMATS = ("jsonl", "parquet")
CORPUS_MARK = b"kfc-trace-corpus/1"
DEFAULT_ROW_GROUP_SIZE = 4096
_PARQUET_MAGIC = b"PAR1"
_SUFFIX = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".parquet": "parquet", ".pq": "parquet"}


class CorpusError(ValueError):
    """A corpus that cannot be read or written at all (missing, wrong file type, unwritable)."""


class CorpusRow(NamedTuple):
    """One row of a corpus: a trace, or an input error that names the row."""

    trace_id: str
    trace: dict[str, Any] | None
    error: str | None


_decode = msgspec.json.Decoder().decode


def loads(body: str | bytes) -> Any:
    """json.loads, faster: msgspec's decoder where it succeeds (on every JSON text it accepts it gives
    the same value, types, key order and all: tests/test_model_fast_paths.py), else json.loads itself,
    which then decides (NaN, Infinity, lone surrogates, UTF-16 bytes, ...) and words any error."""
    try:
        return _decode(body)
    except Exception:  # noqa: BLE001 - whatever msgspec refuses, json.loads decides
        return json.loads(body)


def dumps(trace: Any) -> str:
    """Canonical JSON of a trace (the bytes a JSONL line and a Parquet body hold)."""
    return json.dumps(trace, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# -- validation ------------------------------------------------------------------------------------

def validate_trace(trace: Any, where: str) -> list[str]:
    """Schema problems of one trace (empty when valid): the model's compiled trace schema."""
    return trace_problems(trace, where)


def parse_body(key: str | None, body: Any, where: str | None = None) -> CorpusRow:
    """Parse and validate one serialized trace.

    `key` is what the container says about the row: the Parquet trace_id column, or a location
    "@FILE line N" / "@FILE row N" (a key starting with "@") when the row has no id column; None
    when nothing is known.  `where` optionally names the row's location for messages."""
    claimed = key if key and not key.startswith("@") else None
    where = where or (key[1:] if key and key.startswith("@") else None)
    label = claimed or where or "row"
    at = f" ({where})" if where and where != label else ""
    if not isinstance(body, str | bytes) or not body:
        return CorpusRow(label, None, f"{label}: empty row{at}")
    try:
        trace = loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        msg = getattr(e, "msg", str(e))
        return CorpusRow(label, None, f"{label}: not valid JSON{at}: {msg}")
    if isinstance(trace, dict) and isinstance(trace.get("id"), str) and trace["id"]:
        tid = trace["id"]
        if claimed is not None and tid != claimed:
            return CorpusRow(claimed, None, f"{claimed}: trace_id column says {claimed!r} but the body's id is "
                                            f"{tid!r}{at}")
        label = tid
        at = f" ({where})" if where else ""
    elif claimed is None:
        return CorpusRow(label, None, f"{label}: trace has no id")
    problems = validate_trace(trace, f"{label}{at}")
    if problems:
        return CorpusRow(label, None, "; ".join(problems))
    return CorpusRow(label, trace, None)


# -- format detection ------------------------------------------------------------------------------

def format_of(path: str | Path, fmt: str | None = None) -> str:
    """The corpus format of a path: `fmt` if given, else from the suffix (.jsonl / .parquet)."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise CorpusError(f"unknown corpus format {fmt!r}; use one of: {', '.join(FORMATS)}")
        return fmt
    p = Path(path)
    if p.suffix.lower() in _SUFFIX:
        return _SUFFIX[p.suffix.lower()]
    raise CorpusError(f"{p}: cannot tell the corpus format from the name; use a .jsonl or .parquet suffix "
                      "or give the format")


def _sniff(path: Path) -> str:
    """Format of an existing file from its first bytes (Parquet magic or JSON text)."""
    try:
        with path.open("rb") as f:
            head = f.read(4)
    except IsADirectoryError:
        raise CorpusError(f"{path}: is a directory") from None
    except OSError as e:
        raise CorpusError(f"{path}: cannot read: {e.strerror}") from None
    if head == _PARQUET_MAGIC:
        return "parquet"
    if not head or head.lstrip()[:1] in (b"{", b"") or head[:1] in (b"{", b"\n", b" ", b"\r", b"\t"):
        return "jsonl"
    raise CorpusError(f"{path}: not a trace corpus: neither Parquet nor JSON Lines (starts with {head!r})")


def corpus_files(path: str | Path) -> list[Path]:
    """The files of a corpus: the file itself, or a directory's *.parquet / *.jsonl files, sorted
    (a Spark output directory: part-00000-….parquet, …)."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in _SUFFIX
                       and not f.name.startswith(("_", ".")))
        if not files:
            raise CorpusError(f"{p}: directory holds no .parquet or .jsonl corpus files")
        return files
    if not p.exists():
        raise CorpusError(f"{p}: no such file")
    return [p]


# -- writing ---------------------------------------------------------------------------------------

def _arrow_schema() -> Any:
    import pyarrow as pa

    return pa.schema([
        pa.field("trace_id", pa.string(), nullable=False),
        pa.field("profile", pa.string(), nullable=False),
        pa.field("n_steps", pa.int32(), nullable=False),
        pa.field("ops", pa.list_(pa.string()), nullable=False),
        pa.field("body", pa.string(), nullable=False),
    ], metadata={b"kfc.corpus": CORPUS_MARK})


def _parquet_writer(path: Path) -> Any:
    import pyarrow.parquet as pq

    # Pinned so that bytes depend only on the rows (and the pyarrow version in created_by).
    return pq.ParquetWriter(
        str(path), _arrow_schema(), compression="zstd", compression_level=3, version="2.6",
        data_page_version="1.0", use_dictionary=["profile"], write_statistics=True,
        data_page_size=1 << 20, write_page_index=False, write_page_checksum=False, store_schema=True)


def trace_row(trace: dict[str, Any]) -> dict[str, Any]:
    """The Parquet columns of one trace."""
    steps = trace.get("steps") or []
    ops = sorted({str(s["command"].get("op")) for s in steps if isinstance(s, dict) and isinstance(
        s.get("command"), dict)})
    return {"trace_id": str(trace["id"]), "profile": str(trace["profile"]), "n_steps": len(steps), "ops": ops,
            "body": dumps(trace)}


def write_corpus(traces: Iterable[dict[str, Any]], path: str | Path, fmt: str | None = None, *,
                 row_group_size: int = DEFAULT_ROW_GROUP_SIZE) -> dict[str, Any]:
    """Stream traces to a corpus file (never more than one row group in memory).

    Returns {"path", "format", "count", "bytes"}.  Raises CorpusError when the path is unwritable."""
    p = Path(path)
    fmt = format_of(p, fmt)
    if row_group_size < 1:
        raise CorpusError(f"row group size must be at least 1, got {row_group_size}")
    if p.is_dir():
        raise CorpusError(f"{p}: is a directory; give a file path")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "jsonl":
            count = _write_jsonl(traces, p)
        else:
            count = _write_parquet(traces, p, row_group_size)
    except OSError as e:
        raise CorpusError(f"{p}: cannot write: {e.strerror or e}") from None
    return {"path": str(p), "format": fmt, "count": count, "bytes": p.stat().st_size}


def _write_jsonl(traces: Iterable[dict[str, Any]], p: Path) -> int:
    count = 0
    with p.open("w", encoding="utf-8", newline="\n") as f:
        for t in traces:
            f.write(dumps(t))
            f.write("\n")
            count += 1
    return count


def _write_parquet(traces: Iterable[dict[str, Any]], p: Path, row_group_size: int) -> int:
    import pyarrow as pa

    schema = _arrow_schema()
    writer = _parquet_writer(p)
    count = 0
    cols: dict[str, list[Any]] = {name: [] for name in schema.names}

    def flush() -> None:
        if cols["trace_id"]:
            batch = pa.RecordBatch.from_pydict(cols, schema=schema)
            writer.write_batch(batch, row_group_size=row_group_size)
            for v in cols.values():
                v.clear()

    try:
        for t in traces:
            for k, v in trace_row(t).items():
                cols[k].append(v)
            count += 1
            if len(cols["trace_id"]) >= row_group_size:
                flush()
        flush()
    finally:
        writer.close()
    return count


def write_rows(rows: Iterable[tuple[str, str, int, list[str], str]], path: str | Path, *,
               row_group_size: int = DEFAULT_ROW_GROUP_SIZE) -> int:
    """Write pre-serialized Parquet rows (trace_id, profile, n_steps, ops, body); for Spark tasks."""
    import pyarrow as pa

    schema = _arrow_schema()
    writer = _parquet_writer(Path(path))
    count, buf = 0, []
    try:
        for row in rows:
            buf.append(row)
            count += 1
            if len(buf) >= row_group_size:
                writer.write_batch(pa.RecordBatch.from_arrays([pa.array(c, type=f.type) for c, f in zip(
                    zip(*buf, strict=True), schema, strict=True)], schema=schema), row_group_size=row_group_size)
                buf = []
        if buf:
            writer.write_batch(pa.RecordBatch.from_arrays([pa.array(c, type=f.type) for c, f in zip(
                zip(*buf, strict=True), schema, strict=True)], schema=schema), row_group_size=row_group_size)
    finally:
        writer.close()
    return count


# -- reading ---------------------------------------------------------------------------------------

def iter_bodies(path: str | Path, fmt: str | None = None) -> Iterator[tuple[str, str]]:
    """Raw rows, unparsed: (key, body) pairs for `parse_body`.  The key is a Parquet row's trace_id,
    or its location "@FILE line N" / "@FILE row N" when the row has no id to claim (every JSONL row)."""
    for f in corpus_files(path):
        kind = fmt or _sniff(f)
        if kind == "parquet":
            yield from _parquet_bodies(f)
        else:
            yield from _jsonl_bodies(f)


def _jsonl_bodies(f: Path) -> Iterator[tuple[str, str]]:
    with f.open("rb") as fh:
        for n, raw in enumerate(fh, 1):
            if not raw.strip():
                continue  # a blank line is not a row
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                if n == 1 and b"\0" in raw:
                    raise CorpusError(f"{f}: not a JSON Lines corpus (binary data on line 1)") from None
                text = raw.decode("utf-8", errors="replace")
            yield f"@{f.name} line {n}", text.rstrip("\r\n")


def _parquet_bodies(f: Path) -> Iterator[tuple[str, str]]:
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(str(f))
    except Exception as e:  # noqa: BLE001 - pyarrow raises ArrowInvalid / OSError / others on a damaged file
        raise CorpusError(f"{f}: not a readable Parquet file: {e}") from None
    names = pf.schema_arrow.names
    if "body" not in names:
        raise CorpusError(f"{f}: Parquet file is not a trace corpus (no 'body' column; columns: {', '.join(names)})")
    cols = ["body"] + (["trace_id"] if "trace_id" in names else [])
    row = 0
    for batch in pf.iter_batches(columns=cols, batch_size=1024):
        bodies = batch.column("body").to_pylist()
        ids = batch.column("trace_id").to_pylist() if "trace_id" in cols else [None] * len(bodies)
        for tid, body in zip(ids, bodies, strict=True):
            row += 1
            yield (tid or f"@{f.name} row {row}"), body


def read_corpus(path: str | Path, fmt: str | None = None) -> Iterator[CorpusRow]:
    """Every row of a corpus, parsed and validated; bad rows come back with `error` set."""
    for key, body in iter_bodies(path, fmt):
        yield parse_body(key, body)


def read_traces(path: str | Path) -> Iterator[dict[str, Any]]:
    """Only the good traces (for callers that have reported errors elsewhere)."""
    for row in read_corpus(path):
        if row.trace is not None:
            yield row.trace


def count_rows(path: str | Path) -> int:
    """Number of rows without parsing bodies (Parquet: from the footer)."""
    total = 0
    for f in corpus_files(path):
        if _sniff(f) == "parquet":
            import pyarrow.parquet as pq

            total += pq.ParquetFile(str(f)).metadata.num_rows
        else:
            with f.open("rb") as fh:
                total += sum(1 for line in fh if line.strip())
    return total


__all__ = ["CORPUS_MARK", "FORMATS", "CorpusError", "CorpusRow", "corpus_files", "count_rows", "dumps",
           "format_of", "iter_bodies", "loads", "parse_body", "read_corpus", "read_traces", "trace_row", "validate_trace",
           "write_corpus", "write_rows"]
