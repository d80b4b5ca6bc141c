"""Trace corpora: JSONL and Parquet round trips, byte-identical rewrites, bad rows reported by id/line."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.corpus import (
    CorpusError,
    count_rows,
    dumps,
    iter_bodies,
    read_corpus,
    validate_trace,
    write_corpus,
)
from conformance.generate import generate


@pytest.fixture(scope="module")
def traces() -> list[dict]:
    return list(generate(24, 11))


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_round_trip(tmp_path: Path, traces: list[dict], fmt: str) -> None:
    path = tmp_path / f"c.{fmt}"
    info = write_corpus(iter(traces), path, row_group_size=5)
    assert info["count"] == len(traces) and info["bytes"] == path.stat().st_size
    rows = list(read_corpus(path))
    assert [r.error for r in rows] == [None] * len(traces)
    assert [r.trace for r in rows] == traces
    assert [r.trace_id for r in rows] == [t["id"] for t in traces]
    assert count_rows(path) == len(traces)


def test_parquet_columns_and_row_groups(tmp_path: Path, traces: list[dict]) -> None:
    path = tmp_path / "c.parquet"
    write_corpus(traces, path, row_group_size=5)
    pf = pq.ParquetFile(path)
    assert pf.metadata.num_row_groups == 5  # 24 rows in groups of 5
    table = pf.read()
    assert table.schema.names == ["trace_id", "profile", "n_steps", "ops", "body"]
    assert table.schema.field("n_steps").type == pa.int32()
    row = table.slice(0, 1).to_pylist()[0]
    t = traces[0]
    assert row["trace_id"] == t["id"] and row["profile"] == t["profile"] and row["n_steps"] == len(t["steps"])
    assert row["ops"] == sorted({s["command"]["op"] for s in t["steps"]})
    assert row["body"] == dumps(t)


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_byte_identical_rewrite(tmp_path: Path, traces: list[dict], fmt: str) -> None:
    a, b = tmp_path / f"a.{fmt}", tmp_path / f"b.{fmt}"
    write_corpus(traces, a)
    write_corpus((t for t in traces), b)
    assert a.read_bytes() == b.read_bytes()
    # a rewrite of what was read back is identical too
    c = tmp_path / f"c.{fmt}"
    write_corpus((r.trace for r in read_corpus(a)), c)  # type: ignore[misc]
    assert c.read_bytes() == a.read_bytes()


def test_corrupt_jsonl_rows_are_reported_by_id_or_line(tmp_path: Path, traces: list[dict]) -> None:
    lines = [dumps(t) for t in traces[:6]]
    bad_schema = dict(traces[1], steps=[{"command": {"op": "describe"}}])  # no expected outcome
    no_id = {k: v for k, v in traces[2].items() if k != "id"}
    lines[1] = dumps(bad_schema)
    lines[2] = dumps(no_id)
    lines[3] = lines[3][:40]  # truncated: not JSON
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n")
    rows = list(read_corpus(path))
    assert len(rows) == 6
    assert [r.error is None for r in rows] == [True, False, False, False, True, True]
    assert rows[1].trace_id == traces[1]["id"] and traces[1]["id"] in rows[1].error
    assert "expected" in rows[1].error
    assert rows[2].trace_id == "c.jsonl line 3" and "no id" in rows[2].error
    assert rows[3].trace_id == "c.jsonl line 4" and "not valid JSON" in rows[3].error
    assert [r.trace for r in rows if r.trace] == [traces[0], traces[4], traces[5]]


def test_corrupt_parquet_rows_are_reported(tmp_path: Path, traces: list[dict]) -> None:
    from conformance.corpus import trace_row

    rows = [trace_row(t) for t in traces[:5]]
    rows[1]["body"] = "{not json"
    rows[2]["body"] = dumps(dict(traces[2], version=2))  # fails the schema
    rows[3]["trace_id"] = "someone-else"  # id column disagrees with the body
    rows[4]["trace_id"] = ""  # no id: named by row number
    rows[4]["body"] = "[]"
    from conformance.corpus import _arrow_schema

    path = tmp_path / "c.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=_arrow_schema()), path)
    got = list(read_corpus(path))
    assert len(got) == 5
    assert got[0].error is None and got[0].trace == traces[0]
    assert got[1].trace_id == traces[1]["id"] and "not valid JSON" in got[1].error
    assert got[2].trace_id == traces[2]["id"] and "version" in got[2].error
    assert got[3].trace_id == "someone-else" and traces[3]["id"] in got[3].error
    assert got[4].trace_id == "c.parquet row 5" and got[4].error


def test_empty_corpora(tmp_path: Path) -> None:
    for name in ("e.jsonl", "e.parquet"):
        info = write_corpus([], tmp_path / name)
        assert info["count"] == 0
        assert list(read_corpus(tmp_path / name)) == []
    (tmp_path / "blank.jsonl").write_text("")
    assert list(read_corpus(tmp_path / "blank.jsonl")) == []


def test_wrong_file_type_is_a_clear_error(tmp_path: Path) -> None:
    png = tmp_path / "x.parquet"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))
    with pytest.raises(CorpusError, match="not a trace corpus"):
        list(read_corpus(png))
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"a": [1, 2]}), other)
    with pytest.raises(CorpusError, match="no 'body' column"):
        list(read_corpus(other))
    with pytest.raises(CorpusError, match="no such file"):
        list(read_corpus(tmp_path / "missing.jsonl"))
    with pytest.raises(CorpusError, match="cannot tell the corpus format"):
        write_corpus([], tmp_path / "x.txt")
    with pytest.raises(CorpusError, match="cannot write"):
        write_corpus([], Path("/proc/kfc-nope/x.jsonl"))


def test_directory_of_parts(tmp_path: Path, traces: list[dict]) -> None:
    d = tmp_path / "parts"
    write_corpus(traces[:10], d / "part-00000.parquet")
    write_corpus(traces[10:], d / "part-00001.parquet")
    (d / "_SUCCESS").write_text("")
    assert [r.trace for r in read_corpus(d)] == traces
    assert [k for k, _ in iter_bodies(d)] == [t["id"] for t in traces]


def test_fast_validation_agrees_with_the_schema(traces: list[dict]) -> None:
    from conformance.trace import validate

    samples = [traces[0], dict(traces[0], extra=1), dict(traces[0], id=""), dict(traces[0], rules=["bad"]),
               dict(traces[0], version=True), dict(traces[0], steps=[{"command": {}, "expected": {"error": "NONE"}}]),
               json.loads(json.dumps(traces[0]).replace('"error_code": 0', '"error_code": "0"'))]
    for s in samples:
        assert bool(validate_trace(s, "t")) == bool(validate(s, "t")), s.get("id")
