"""The Spark half of replay and generation: the same job runs embedded (`local[*]`) or on a cluster.

    replay(corpus, "reference", "out/")            -> summary dict (also out/summary.json)
    generate_with_spark(count, seed, "c.parquet")  -> {"path", "format", "count", "bytes", ...}

Replay: the corpus is split on the driver from metadata only (Parquet: footers -> slices of at most
2048 rows inside row groups, read by each task with pyarrow; JSON Lines: `textFile`, one RDD per
file, keyed "@FILE line N").  Each partition makes its target once (`replay_core.replay_rows`),
writes its per-trace results to out/results/part-NNNNN.parquet itself (atomic rename, so a retried
attempt replaces rather than adds) and returns one small tuple: its row count, its `Summary` and the
positions of its first K findings.  Spark keeps one successful attempt's value per partition, so the
merged counts are exact under retries; rows out are counted again from the part files' footers.
Only those aggregates and the first K findings ever reach the driver.  (Measured at 20k traces on 2
cores: this runs at 1.28x the single-process loop; `spark.read.parquet` + `createDataFrame(...).write`
ran at 0.93x, the bodies and result rows going through the JVM.)  Output layout: docs/spark.md.

Generation: seed ranges become tasks; each task writes a part file (same writer options as the
single-process generator) into a staging directory next to the output, and the driver concatenates
the parts in range order -- JSON Lines byte for byte, Parquet re-chunked into the same row groups --
so `--spark` output is byte-identical to `kfc generate` without it.  The driver streams one row group
at a time.  On a real cluster the output directory must be on a filesystem the executors share.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
import uuid
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Self

from conformance.corpus import DEFAULT_ROW_GROUP_SIZE, CorpusError, corpus_files, count_rows, format_of
from conformance.replay import RESULT_FIELDS, STATUSES, Summary

PACKAGES = ("reference_impl", "conformance", "spark_checks", "fixtures")
ALLURE_PREFIX = "kfc-replay-"
MAX_ATTACHED_BODY = 1 << 20  # a divergent trace's body kept in results / attached to Allure
ROWS_PER_PARTITION = 2000  # JSON Lines replay: a few seconds per task; enough tasks for progress and retries
GEN_ROWS_PER_TASK = 1000  # generation is ~5x slower per trace than replay


class SparkJobError(ValueError):
    """The job cannot run (no Java, unreachable master, bad corpus …): one line for the user.
    A ValueError so CLIs that turn ValueError into a one-line error (kfc generate) do so here too."""


# -- preflight -------------------------------------------------------------------------------------

def _pyspark() -> Any:
    try:
        import pyspark
    except ImportError:
        raise SparkJobError("pyspark is not installed: pip install 'kafka-feature-conformance[spark]' "
                            "(pyspark, pyarrow, pandas<3)") from None
    return pyspark


def check_java() -> str:
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home and (Path(home) / "bin" / "java").exists() else shutil.which("java")
    if not java:
        raise SparkJobError("java not found: Spark needs Java 17 or 21 on PATH (or JAVA_HOME)")
    return java


def is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[")


def _master_hosts(master: str) -> list[tuple[str, int]]:
    if not master.startswith("spark://"):
        return []
    out = []
    for hp in master[len("spark://"):].split(","):  # HA masters: spark://h1:7077,h2:7077
        host, _, port = hp.rpartition(":")
        try:
            out.append((host or hp, int(port) if port else 7077))
        except ValueError:
            raise SparkJobError(f"bad Spark master URL {master!r}: expected spark://HOST:PORT") from None
    return out


def is_loopback(master: str) -> bool:
    return is_local(master) or all(h in ("127.0.0.1", "localhost", "::1") for h, _ in _master_hosts(master))


def check_master(master: str, timeout: float = 5.0) -> None:
    """Fail fast on an unreachable standalone master (Spark itself retries for a minute)."""
    if is_local(master):
        return
    if not master.startswith(("spark://", "yarn", "k8s://")):
        raise SparkJobError(f"unsupported Spark master {master!r}: use local[N], local[*] or spark://HOST:PORT")
    errors = []
    for host, port in _master_hosts(master):
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except OSError as e:
            errors.append(f"{host}:{port}: {e.strerror or e}")
    if errors:
        raise SparkJobError(f"cannot reach the Spark master {master} ({'; '.join(errors)})")


# -- shipping the code -----------------------------------------------------------------------------

def code_zip(dest: Path) -> Path:
    """The project's packages (with fixtures' JSON) as one zip for executors' sys.path.  Compiled
    .pyc files go in beside the sources: zipimport cannot cache bytecode, so without them every new
    Python worker would recompile the whole project."""
    import importlib
    import py_compile

    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
        for name in PACKAGES:
            pkg = Path(importlib.import_module(name).__file__ or "").resolve().parent
            for f in sorted(pkg.rglob("*")):
                if not f.is_file() or "__pycache__" in f.parts or f.suffix in (".pyc", ".pyo"):
                    continue
                arc = Path(name) / f.relative_to(pkg)
                z.write(f, arc)
                if f.suffix == ".py":
                    pyc = dest.parent / "pyc" / arc.with_suffix(".pyc")
                    pyc.parent.mkdir(parents=True, exist_ok=True)
                    # zipimport only accepts timestamp-checked pycs whose mtime matches the .py entry
                    py_compile.compile(str(f), cfile=str(pyc), dfile=str(arc), doraise=True,
                                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
                    z.write(pyc, arc.with_suffix(".pyc"))
    return dest


# -- the session -----------------------------------------------------------------------------------

_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
# PySpark's gateway counts as Spark's shell: unless its logger has its own level Spark prints
# "Setting default log level to WARN" and, after that, the spark.log.level line.
logger.shell.name = org.apache.spark.api.python.PythonGatewayServer
logger.shell.level = error
"""


class SparkRun:
    """A SparkSession for one run, with its own scratch directory (spark.local.dir, java.io.tmpdir,
    logs config, code zip) removed on `stop()`.  Loopback and this interpreter when the master is
    local or on 127.0.0.1; the project's code is shipped with addPyFile when the master is not local."""

    def __init__(self, master: str = "local[*]", app_name: str = "kfc", conf: dict[str, str] | None = None,
                 driver_memory: str = "1g"):
        self.master = master
        self.app_name = app_name
        self.conf = dict(conf or {})
        self.driver_memory = driver_memory
        self.spark: Any = None
        self.run_dir: Path | None = None
        self.start_seconds = 0.0
        self._saved_env: dict[str, str | None] = {}

    def _setenv(self, key: str, value: str, only_if_unset: bool = False) -> None:
        if only_if_unset and os.environ.get(key):
            return
        self._saved_env.setdefault(key, os.environ.get(key))
        os.environ[key] = value

    def start(self) -> Self:
        _pyspark()
        # Under spark-submit the JVM is already up and --master/--conf were given to it.
        submitted = bool(os.environ.get("PYSPARK_GATEWAY_PORT"))
        if not submitted:
            check_java()
            check_master(self.master)
        from pyspark import SparkContext
        from pyspark.sql import SparkSession

        if SparkContext._active_spark_context is not None:  # type: ignore[attr-defined]
            raise SparkJobError("a SparkContext is already running in this process; stop it or pass spark=")
        t0 = time.perf_counter()
        self.run_dir = Path(tempfile.mkdtemp(prefix="kfc-spark-"))
        local_dir, tmp = self.run_dir / "local", self.run_dir / "tmp"
        local_dir.mkdir()
        tmp.mkdir()
        conf_dir = self.run_dir / "conf"
        conf_dir.mkdir()
        log4j = conf_dir / "log4j2.properties"
        log4j.write_text(_LOG4J)
        # spark-class puts SPARK_CONF_DIR on the driver's classpath, where log4j2 looks first; a
        # user's own SPARK_CONF_DIR (spark-defaults.conf, their logging) is left alone.
        self._setenv("SPARK_CONF_DIR", str(conf_dir), only_if_unset=True)
        java_opts = f"-Dlog4j2.configurationFile=file:{log4j} -Djava.io.tmpdir={tmp}"
        loop = is_loopback(self.master) and not submitted
        if loop:  # otherwise Spark binds to the external interface
            self._setenv("SPARK_LOCAL_IP", "127.0.0.1", only_if_unset=True)
            self._setenv("PYSPARK_PYTHON", sys.executable, only_if_unset=True)
        self._setenv("PYSPARK_DRIVER_PYTHON", sys.executable, only_if_unset=True)
        self._setenv("TMPDIR", str(tmp))  # the driver JVM inherits it at launch
        conf = {
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.local.dir": str(local_dir),
            "spark.driver.memory": self.driver_memory,
            "spark.driver.extraJavaOptions": java_opts,
            "spark.sql.session.timeZone": "UTC",
            "spark.python.worker.reuse": "true",
            "spark.log.level": "ERROR",
        }
        if loop:
            conf["spark.driver.host"] = "127.0.0.1"
            conf["spark.driver.bindAddress"] = "127.0.0.1"
            conf["spark.executor.extraJavaOptions"] = java_opts  # same machine: the same files exist
            conf["spark.executorEnv.TMPDIR"] = str(tmp)
        if not is_local(self.master):
            conf.setdefault("spark.task.maxFailures", "4")
        conf.update(self.conf)
        builder = SparkSession.builder.appName(self.app_name)
        if submitted:
            conf = dict(self.conf)
        else:
            builder = builder.master(self.master)
        for k, v in conf.items():
            builder = builder.config(k, v)
        try:
            self.spark = builder.getOrCreate()
        except Exception as e:  # noqa: BLE001 - Py4J/PySpark raise many kinds; all mean "no session"
            self.stop()
            raise SparkJobError(f"could not start Spark ({self.master}): {_one_line(e)}") from None
        finally:
            self._restore("TMPDIR")
        self.spark.sparkContext.setLogLevel("ERROR")
        self.master = str(self.spark.sparkContext.master)
        if not is_local(self.master):
            self.spark.sparkContext.addPyFile(str(code_zip(self.run_dir / "kfc-code.zip")))
        self.start_seconds = time.perf_counter() - t0
        return self

    def _restore(self, key: str) -> None:
        if key in self._saved_env:
            old = self._saved_env.pop(key)
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old

    @property
    def sc(self) -> Any:
        return self.spark.sparkContext

    @property
    def parallelism(self) -> int:
        return max(1, int(self.sc.defaultParallelism))

    def jvm_pid(self) -> int | None:
        proc = getattr(getattr(self.sc, "_gateway", None), "proc", None)
        return getattr(proc, "pid", None)

    def stop(self) -> None:
        if self.spark is not None:
            try:
                self.spark.stop()
            finally:
                self.spark = None
                from pyspark import SparkContext

                # Next SparkRun launches a fresh JVM with its own options (tmpdir, log config).
                gw = SparkContext._gateway  # type: ignore[attr-defined]
                if gw is not None:
                    try:
                        gw.shutdown()
                    except Exception:  # noqa: BLE001, S110 - the JVM may already be gone
                        pass
                    proc = getattr(gw, "proc", None)
                    if proc is not None:
                        try:  # the gateway JVM exits when its stdin closes
                            if proc.stdin:
                                proc.stdin.close()
                            proc.wait(timeout=15)
                        except Exception:  # noqa: BLE001 - whatever went wrong, do not leave a JVM behind
                            proc.kill()
                            proc.wait(timeout=5)
                    SparkContext._gateway = None  # type: ignore[attr-defined]
                    SparkContext._jvm = None  # type: ignore[attr-defined]
        for key in list(self._saved_env):
            self._restore(key)
        if self.run_dir is not None:
            shutil.rmtree(self.run_dir, ignore_errors=True)
            self.run_dir = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text if len(text) <= 300 else text[:300] + "…"


# -- progress --------------------------------------------------------------------------------------

class _Progress:
    """Polls the status tracker from a driver thread: a rich bar on a terminal, else a line every
    `every` seconds on stderr (CI logs)."""

    def __init__(self, sc: Any, group: str, label: str, enabled: bool, every: float = 10.0):
        self.sc, self.group, self.label, self.enabled, self.every = sc, group, label, enabled, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kfc-progress", daemon=True)
        self.failed = 0

    def __enter__(self) -> Self:
        if self.enabled:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def poll(self) -> tuple[int, int, int, int]:
        tracker = self.sc.statusTracker()
        total = done = active = failed = 0
        for jid in tracker.getJobIdsForGroup(self.group):
            job = tracker.getJobInfo(jid)
            for sid in (job.stageIds if job else []):
                st = tracker.getStageInfo(sid)
                if st is not None:
                    total += st.numTasks
                    done += st.numCompletedTasks
                    active += st.numActiveTasks
                    failed += st.numFailedTasks
        return total, done, active, failed

    def _run(self) -> None:
        t0 = time.monotonic()
        if sys.stderr.isatty():
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[info]}"),
                          TimeElapsedColumn(), transient=True) as bar:
                task = bar.add_task(self.label, total=None, info="")
                while not self._stop.wait(0.5):
                    total, done, active, failed = self._safe_poll()
                    bar.update(task, total=total or None, completed=done,
                               info=f"{done}/{total} tasks, {active} running" + (f", {failed} retried" if failed else ""))
            return
        last = 0.0
        while not self._stop.wait(0.5):
            now = time.monotonic() - t0
            if now - last >= self.every:
                last = now
                total, done, active, failed = self._safe_poll()
                print(f"[kfc] {self.label}: {done}/{total} tasks done, {active} running"
                      + (f", {failed} failed (retried)" if failed else "") + f" — {now:.0f} s",
                      file=sys.stderr, flush=True)

    def _safe_poll(self) -> tuple[int, int, int, int]:
        try:
            out = self.poll()
            self.failed = max(self.failed, out[3])
            return out
        except Exception:  # noqa: BLE001 - the context is stopping; progress is best effort
            return (0, 0, 0, 0)


# -- replay ----------------------------------------------------------------------------------------

def _clip_body(body: Any) -> str | None:
    if body is None:
        return None
    text = body if isinstance(body, str) else bytes(body).decode("utf-8", errors="replace")
    return text if len(text) <= MAX_ATTACHED_BODY else text[:MAX_ATTACHED_BODY]


def replay_partition(target_spec: str, rows: Iterable[tuple[str | None, Any]]) -> Iterator[tuple[Any, ...]]:
    """Runs in a Python worker: one target for the whole partition; one output row per input row
    (the trace body is kept only for rows that did not pass, for triage and Allure)."""
    from conformance.replay import replay_rows

    last: list[Any] = [None]

    def feed() -> Iterator[tuple[Any, Any]]:
        for key, body in rows:
            if isinstance(body, bytes | bytearray):
                body = bytes(body).decode("utf-8", errors="replace")
            last[0] = body
            yield key, body

    for r in replay_rows(target_spec, feed()):  # lock-step: one result per row pulled
        yield (*(r[f] for f in RESULT_FIELDS), None if r["status"] == "pass" else _clip_body(last[0]))


def result_arrow_schema() -> Any:
    import pyarrow as pa

    types = {"first_divergent_step": pa.int32(), "n_steps": pa.int32(), "ops": pa.list_(pa.string()),
             "codes": pa.list_(pa.string()), "op_codes": pa.list_(pa.string())}
    return pa.schema([pa.field(f, types.get(f, pa.string())) for f in (*RESULT_FIELDS, "trace")])


def replay_task(target_spec: str, results_dir: str, k: int, index: int,
                rows: Iterable[tuple[str | None, Any]]) -> Iterator[tuple[int, int, Summary, list[tuple[str, int]]]]:
    """Runs in a Python worker: replay one partition, write its results to
    results_dir/part-INDEX.parquet (atomic rename: a retried or speculative attempt replaces, never
    adds) and return (index, rows, Summary, the k smallest non-passing (trace_id, row) of the part).
    Spark keeps exactly one successful attempt's return value per partition."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = result_arrow_schema()
    names = schema.names
    final = Path(results_dir) / f"part-{index:05d}.parquet"
    tmp = final.with_name(f".{final.name}.{uuid.uuid4().hex}")
    summary = Summary()
    top: list[tuple[str, int]] = []
    cols: dict[str, list[Any]] = {n: [] for n in names}
    n = 0
    writer = pq.ParquetWriter(str(tmp), schema, compression="zstd")
    try:
        for row in replay_partition(target_spec, rows):
            rec = dict(zip(names, row, strict=True))
            summary.add(rec)
            for name, v in rec.items():
                cols[name].append(v)
            if rec["status"] != "pass" and k > 0:
                top.append((rec["trace_id"], n))
                if len(top) >= 4 * k:  # keep the k smallest ids, in bounded memory
                    top = sorted(top)[:k]
            n += 1
            if len(cols["trace_id"]) >= 1024:
                writer.write_batch(pa.RecordBatch.from_pydict(cols, schema=schema))
                for v in cols.values():
                    v.clear()
        if cols["trace_id"]:
            writer.write_batch(pa.RecordBatch.from_pydict(cols, schema=schema))
    finally:
        writer.close()
    os.replace(tmp, final)
    summary.divergences = summary.divergences[:0]  # the driver picks the first ones by trace id
    yield index, n, summary, sorted(top)[:k]


def _read_rows(results: Path, picks: list[tuple[str, int, int]]) -> list[dict[str, Any]]:
    """The result rows (index, row) picked, from the part files (K rows: bounded driver memory)."""
    import pyarrow.parquet as pq

    by_part: dict[int, list[int]] = {}
    for _, part, row in picks:
        by_part.setdefault(part, []).append(row)
    found: dict[tuple[int, int], dict[str, Any]] = {}
    for part, idx in by_part.items():
        table = pq.read_table(results / f"part-{part:05d}.parquet").take(idx)
        for i, rec in zip(idx, table.to_pylist(), strict=True):
            found[(part, i)] = rec
    return [found[(part, row)] for _, part, row in picks]


def _jsonl_key(name: str) -> Any:
    def key(pair: tuple[bytes, int]) -> tuple[str, bytes]:
        return (f"@{name} line {pair[1] + 1}", pair[0])
    return key


def _nonblank(pair: tuple[bytes, int]) -> bool:
    return bool(pair[0].strip())


def _strip_cr(pair: tuple[str, bytes]) -> tuple[str, bytes]:
    return pair[0], pair[1].rstrip(b"\r")


def parquet_slices(files: Sequence[Path], rows: int, parallelism: int) -> list[tuple[str, int, int, int]]:
    """(file, row group, start, stop) slices of about equal size: the replay's input splits.  Read
    from the footers on the driver; each task then reads its own slice with pyarrow, so trace bodies
    go straight from the file into the Python worker (not through the JVM as rows)."""
    import pyarrow.parquet as pq

    size = max(128, min(2048, math.ceil(rows / (4 * parallelism)) if rows else 128))
    out = []
    for f in files:
        try:
            pf = pq.ParquetFile(str(f))
        except Exception as e:  # noqa: BLE001 - pyarrow raises ArrowInvalid / OSError on a damaged file
            raise SparkJobError(f"{f}: not a readable Parquet file: {_one_line(e)}") from None
        names = pf.schema_arrow.names
        if "body" not in names:
            raise SparkJobError(f"{f}: Parquet corpus has no 'body' column (columns: {', '.join(names)})")
        for rg in range(pf.metadata.num_row_groups):
            n = pf.metadata.row_group(rg).num_rows
            parts = max(1, math.ceil(n / size))
            step = math.ceil(n / parts)
            out += [(str(f.resolve()), rg, a, min(n, a + step)) for a in range(0, n, step)]
    return out


def read_slice(item: tuple[str, int, int, int]) -> Iterator[tuple[str, Any]]:
    """Runs in a Python worker: the (key, body) pairs of one slice; a row without a trace_id is
    keyed by its location, as corpus.iter_bodies does."""
    import pyarrow.parquet as pq

    path, rg, a, b = item
    pf = pq.ParquetFile(path)
    cols = ["body"] + (["trace_id"] if "trace_id" in pf.schema_arrow.names else [])
    table = pf.read_row_group(rg, columns=cols).slice(a, b - a)
    bodies = table.column("body").to_pylist()
    ids = table.column("trace_id").to_pylist() if "trace_id" in cols else [None] * len(bodies)
    before = sum(pf.metadata.row_group(i).num_rows for i in range(rg)) + a
    name = Path(path).name
    for i, (tid, body) in enumerate(zip(ids, bodies, strict=True)):
        yield (tid or f"@{name} row {before + i + 1}"), body


def input_rdd(run: SparkRun, corpus: str | Path, rows_in: int) -> Any:
    """(key, body) pairs of every corpus row, in slices small enough to keep both cores busy."""
    from conformance.corpus import _sniff

    sc = run.sc
    files = corpus_files(corpus)
    parquet = [f for f in files if _sniff(f) == "parquet"]
    jsonl = [f for f in files if f not in parquet]
    rdds = []
    if parquet:
        slices = parquet_slices(parquet, rows_in, run.parallelism)
        if slices:
            rdds.append(sc.parallelize(slices, len(slices)).flatMap(read_slice))
    want = max(4 * run.parallelism, math.ceil(rows_in / ROWS_PER_PARTITION))
    for f in jsonl:
        # bytes, not str: a bad UTF-8 byte must become an input-error row, not a failed task.
        parts = max(1, want // max(1, len(files)))
        rdd = sc.textFile(str(f.resolve()), minPartitions=parts, use_unicode=False)
        rdds.append(rdd.zipWithIndex().filter(_nonblank).map(_jsonl_key(f.name)).map(_strip_cr))
    if not rdds:
        return sc.emptyRDD()
    return rdds[0] if len(rdds) == 1 else sc.union(rdds)


def _clean_out(out: Path, allure: Path) -> None:
    for name in ("results", "coverage.parquet"):
        shutil.rmtree(out / name, ignore_errors=True)
    for name in ("summary.json", "coverage.json", "coverage.parquet"):
        if (out / name).is_file():
            (out / name).unlink()
    if allure.is_dir():  # only our own files: the suite's results may share the directory
        for f in allure.glob(f"{ALLURE_PREFIX}*"):
            f.unlink()


def replay(corpus: str | Path, target_spec: str, out_dir: str | Path, master: str = "local[*]",
           k_allure: int = 20, progress: bool = True, partitions: int | None = None,
           spark: SparkRun | None = None, allure_dir: str | Path | None = None) -> dict[str, Any]:
    """Replay every trace of CORPUS against TARGET_SPEC with Spark; write OUT_DIR/{results/,
    summary.json, coverage.json, coverage.parquet, allure-results/}; return the summary.

    `partitions` forces the number of replay tasks; `spark` reuses a started SparkRun (its master wins);
    `allure_dir` puts the Allure results elsewhere (e.g. `kfc check`'s report/allure-results)."""
    t_total = time.perf_counter()
    corpus_p, out = Path(corpus), Path(out_dir)
    if not corpus_p.exists():
        raise SparkJobError(f"{corpus}: no such corpus file or directory")
    try:
        rows_in = count_rows(corpus_p)
    except CorpusError as e:
        raise SparkJobError(str(e)) from None
    _check_target(target_spec)
    out.mkdir(parents=True, exist_ok=True)
    allure = Path(allure_dir) if allure_dir is not None else out / "allure-results"
    _clean_out(out, allure)
    own = spark is None
    run = spark or SparkRun(master, app_name=f"kfc replay {target_spec}")
    if own:
        run.start()
    try:
        t0 = time.perf_counter()
        rdd = input_rdd(run, corpus_p, rows_in)
        if partitions:
            rdd = rdd.repartition(partitions)
        results_dir = (out / "results").resolve()
        results_dir.mkdir(parents=True)
        k = max(k_allure, 20)
        tasks = rdd.mapPartitionsWithIndex(
            lambda i, rows, spec=target_spec, d=str(results_dir), k=k: replay_task(spec, d, k, i, rows))
        n_parts = tasks.getNumPartitions()
        group = f"kfc-replay-{uuid.uuid4().hex[:8]}"
        run.sc.setJobGroup(group, f"kfc replay {corpus_p.name} on {target_spec}")
        prog = _Progress(run.sc, group, f"replay {corpus_p.name} ({n_parts} tasks)", progress)
        with prog:
            # One small tuple per partition comes back: counts and the k first findings' positions.
            parts = tasks.collect()
        replay_seconds = time.perf_counter() - t0
        failed_tasks = prog.failed if progress else None
        agg = Summary()
        for _, _, part_summary, _ in parts:
            agg.merge(part_summary)
        summary = agg.to_dict()
        rows_written = _count_results(results_dir)
        picks = sorted((tid, index, row) for index, _, _, top in parts for tid, row in top)[:k]
        first = _read_rows(results_dir, picks)
        summary["first_divergences"] = [{f: r.get(f) for f in ("trace_id", "profile", "status",
                                                              "first_divergent_step", "op", "diff")}
                                        for r in first[:20]]
        n_allure = write_allure(allure, first[:k_allure], target_spec)
        jvm_pid = run.jvm_pid()
        start_seconds = run.start_seconds
        master_used = run.master
    finally:
        if own:
            run.stop()
    total = time.perf_counter() - t_total
    summary.update({
        "corpus": str(corpus_p), "target": target_spec, "master": master_used,
        "rows_in": rows_in, "rows_out": rows_written,
        "complete": rows_in == rows_written == summary["traces"],
        "partitions": n_parts, "failed_tasks": failed_tasks,
        "seconds": {"spark_start": round(start_seconds, 2) if own else 0.0, "replay": round(replay_seconds, 2),
                    "total": round(total, 2)},
        "traces_per_s": round(summary["traces"] / replay_seconds, 1) if replay_seconds > 0 else None,
        "results": str(out / "results"), "allure_results": n_allure,
        "driver_peak_rss_mb": peak_rss_mb(), "driver_jvm_pid": jvm_pid,
    })
    write_coverage(out, summary["coverage"])
    (out / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=False) + "\n")
    return summary


def _count_results(results: Path) -> int:
    """Rows on disk (Parquet footers): the 'rows out' of rows in = rows out."""
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(str(f)).metadata.num_rows for f in sorted(results.glob("part-*.parquet")))


def _check_target(spec: str) -> None:
    """Make and close the target once in the driver: an unknown spec is one clear error, not N failed tasks."""
    from conformance.targets import TargetError, make_target

    try:
        t = make_target(spec)
    except (ValueError, TargetError) as e:
        raise SparkJobError(str(e)) from None
    except Exception as e:  # noqa: BLE001 - a target plugin may raise anything
        raise SparkJobError(f"target {spec!r} cannot start: {_one_line(e)}") from None
    try:
        t.close()
    except Exception:  # noqa: BLE001, S110 - only the creation was being checked
        pass


def peak_rss_mb() -> float:
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # KiB on Linux


def write_coverage(out: Path, matrix: dict[str, dict[str, dict[str, int]]]) -> None:
    (out / "coverage.json").write_text(json.dumps(matrix, indent=1, sort_keys=True) + "\n")
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [(op, code, profile, n) for op, codes in sorted(matrix.items()) for code, profiles in sorted(codes.items())
            for profile, n in sorted(profiles.items())]
    table = pa.table({"op": [r[0] for r in rows], "code": [r[1] for r in rows], "profile": [r[2] for r in rows],
                      "traces": pa.array([r[3] for r in rows], type=pa.int64())})
    pq.write_table(table, out / "coverage.parquet")


# -- Allure ----------------------------------------------------------------------------------------

def _rules_of(row: dict[str, Any], trace: dict[str, Any] | None) -> list[str]:
    rules: list[str] = []
    for field in ("expected", "actual"):
        try:
            rid = json.loads(row.get(field) or "null") or {}
            rid = rid.get("rule") if isinstance(rid, dict) else None
        except ValueError:
            rid = None
        if rid and rid not in rules:
            rules.append(rid)
    if not rules and trace:  # no rule at the step itself: the trace's own rule ids
        rules = list(trace.get("rules") or [])[:5]
    return rules


def allure_result(row: dict[str, Any], target_spec: str, now_ms: int) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """One Allure result (the format allure-pytest writes) for a non-passing replay row, plus its
    attachments as (file name, content)."""
    from reference_impl.rules import RULES

    tid = row["trace_id"]
    key = hashlib.md5(f"{target_spec}\0{tid}".encode()).hexdigest()
    trace = None
    try:
        trace = json.loads(row.get("trace") or "null")
    except ValueError:
        pass
    rules = _rules_of(row, trace if isinstance(trace, dict) else None)
    labels = []
    for rid in rules:
        rule = RULES.get(rid)
        if rule is not None:
            labels += [{"name": "epic", "value": rule.kip}, {"name": "feature", "value": rule.area},
                       {"name": "story", "value": rid}]
    if not labels:
        labels = [{"name": "epic", "value": "kfc replay"}, {"name": "feature", "value": row.get("op") or "input"},
                  {"name": "story", "value": "(no rule id)"}]
    labels += [{"name": "suite", "value": "kfc replay"}, {"name": "parentSuite", "value": target_spec},
               {"name": "tag", "value": row["status"]}, {"name": "framework", "value": "kfc-spark"},
               {"name": "language", "value": "cpython3"}]
    status = "failed" if row["status"] == "diverged" else "broken"
    attachments: list[tuple[str, str]] = []
    att_meta = []
    if row.get("trace"):
        name = f"{ALLURE_PREFIX}{key}-trace-attachment.json"
        attachments.append((name, row["trace"]))
        att_meta.append({"name": "trace", "source": name, "type": "application/json"})
    if row.get("expected") or row.get("actual"):
        name = f"{ALLURE_PREFIX}{key}-diff-attachment.json"
        body = {"step": row.get("first_divergent_step"), "op": row.get("op"),
                "expected": json.loads(row["expected"]) if row.get("expected") else None,
                "actual": json.loads(row["actual"]) if row.get("actual") else None, "diff": row.get("diff")}
        attachments.append((name, json.dumps(body, indent=1)))
        att_meta.append({"name": "expected vs actual", "source": name, "type": "application/json"})
    steps = []
    ops = row.get("ops") or []
    stop_at = row.get("first_divergent_step")
    for i, op in enumerate(ops[: (stop_at + 1) if stop_at is not None else 0]):
        steps.append({"name": f"step {i}: {op}", "status": status if i == stop_at else "passed",
                      "start": now_ms, "stop": now_ms})
    where = f"step {stop_at} ({row.get('op')})" if stop_at is not None else "the trace"
    result = {
        "name": f"replay {tid} [{row.get('profile') or '?'}]",
        "fullName": f"kfc replay#{tid}",
        "status": status,
        "statusDetails": {"message": f"{row['status']} at {where}: {row.get('diff') or ''}",
                          "trace": f"kfc replay-trace <trace file> --target {target_spec}\n"
                                   f"(the trace is attached; results row trace_id={tid})"},
        "steps": steps,
        "attachments": att_meta,
        "parameters": [{"name": "target", "value": target_spec}, {"name": "profile", "value": str(row.get("profile"))},
                       {"name": "trace_id", "value": tid}],
        "start": now_ms, "stop": now_ms,
        "uuid": str(uuid.UUID(key)),
        "historyId": key,
        "testCaseId": hashlib.md5(f"kfc replay\0{tid}".encode()).hexdigest(),
        "labels": labels,
        "links": [],
    }
    return result, attachments


def write_allure(directory: Path, rows: Sequence[dict[str, Any]], target_spec: str) -> int:
    if not rows:
        return 0
    directory.mkdir(parents=True, exist_ok=True)
    now_ms = int(time.time() * 1000)
    for row in rows:
        result, attachments = allure_result(row, target_spec, now_ms)
        for name, content in attachments:
            (directory / name).write_text(content)
        (directory / f"{ALLURE_PREFIX}{result['historyId']}-result.json").write_text(json.dumps(result, indent=1))
    return len(rows)


# -- generation ------------------------------------------------------------------------------------

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
    staging = out_p.parent / f".{out_p.name}.parts-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    t0 = time.perf_counter()
    own = spark is None
    run = spark or SparkRun(master or "local[*]", app_name="kfc generate")
    try:
        if own:
            run.start()
        tasks = max(2 * run.parallelism, math.ceil(count / GEN_ROWS_PER_TASK))
        ranges = list(enumerate(_split(count, tasks)))
        prof = list(profile) if profile is not None and not isinstance(profile, str) else profile
        group = f"kfc-generate-{uuid.uuid4().hex[:8]}"
        run.sc.setJobGroup(group, f"kfc generate {count} traces")
        where = str(staging.resolve())
        with _Progress(run.sc, group, f"generate {count} traces ({len(ranges)} tasks)", True):
            written = run.sc.parallelize(ranges, max(1, len(ranges))).map(
                lambda item, s=seed, p=prof, f=fmt, d=where: generate_part(s, p, f, d, item)
            ).sum()
        if written != count:
            raise SparkJobError(f"generation wrote {written} traces, expected {count}")
        parts = [staging / f"part-{i:05d}.{fmt}" for i, _ in ranges]
        tmp = out_p.with_name(f".{out_p.name}.tmp-{uuid.uuid4().hex[:8]}")
        try:
            if fmt == "jsonl":
                with tmp.open("wb") as dst:
                    for p in parts:
                        with p.open("rb") as src:
                            shutil.copyfileobj(src, dst, 1 << 20)
            else:
                _merge_parquet(parts, tmp, rgs)
            os.replace(tmp, out_p)
        finally:
            if tmp.exists():
                tmp.unlink()
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if own:
            run.stop()
    seconds = time.perf_counter() - t0
    return {"path": str(out_p), "format": fmt, "count": count, "bytes": out_p.stat().st_size,
            "seconds": round(seconds, 3), "traces_per_s": round(count / seconds, 1) if seconds > 0 else None,
            "tasks": len(ranges)}


__all__ = ["STATUSES", "SparkJobError", "SparkRun", "check_java", "check_master", "code_zip", "generate_with_spark",
           "replay", "result_arrow_schema"]
