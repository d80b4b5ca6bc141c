"""A SparkSession for one kfc run: preflight (pyspark, Java, master), shipping the project's code,
and a stop that always cleans up -- also on Ctrl-C or SIGTERM.

    with SparkRun("local[2]") as run:
        run.sc.parallelize(...)

While a run is up, SIGINT and SIGTERM raise KeyboardInterrupt and, on a watcher thread (a signal
handler takes no locks: conformance.interrupts), SIGKILL every process it started (the py4j gateway
JVM, spark-submit's launcher, Python workers and whatever they spawned);
`stop()` then removes the run's scratch directory.  The processes are found by a per-run token in
their environment, so a child whose Popen object was lost (Ctrl-C inside pyspark's gateway launch)
is found too.  Killing first matters: pyspark's own cleanup calls into the JVM and can block.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import uuid
import warnings
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Self

from conformance.interrupts import Trap

PACKAGES = ("reference_impl", "conformance", "spark_checks")  # reference_impl first: the data goes in it
RUN_TOKEN_ENV = "KFC_SPARK_RUN"  # inherited by every process the run launches
GRACEFUL_STOP_SECONDS = 10.0  # spark.stop() and the JVM's exit, at the end of a normal run
KILL_SECONDS = 1.5  # SIGKILLed processes are gone well within this
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class SparkJobError(ValueError):
    """The job cannot run (no Java, unreachable master, bad corpus …): one line for the user.
    A ValueError so CLIs that turn ValueError into a one-line error (kfc generate) do so here too."""


def one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text if len(text) <= 300 else text[:300] + "…"


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
        raise SparkJobError("java not found: Spark needs Java 17 or 21 on PATH (or JAVA_HOME); install one "
                            "(e.g. `apt-get install openjdk-17-jre-headless`) or pass --no-spark")
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
    """The project's packages (with the fixtures data, as reference_impl/fixtures) as one zip for executors' sys.path.  Compiled
    .pyc files go in beside the sources: zipimport cannot cache bytecode, so without them every new
    Python worker would recompile the whole project."""
    import importlib
    import py_compile

    from reference_impl.data import fixtures

    sources = [(Path(importlib.import_module(name).__file__ or "").resolve().parent, Path(name)) for name in PACKAGES]
    data = Path(str(fixtures())).resolve()
    if not data.is_relative_to(sources[0][0]):  # a checkout: the fixtures folder goes where a wheel has it
        sources.append((data, Path("reference_impl") / "fixtures"))
    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
        for pkg, prefix in sources:
            for f in sorted(pkg.rglob("*")):
                if not f.is_file() or "__pycache__" in f.parts or f.suffix in (".pyc", ".pyo"):
                    continue
                arc = prefix / f.relative_to(pkg)
                z.write(f, arc)
                if f.suffix == ".py":
                    pyc = dest.parent / "pyc" / arc.with_suffix(".pyc")
                    pyc.parent.mkdir(parents=True, exist_ok=True)
                    # zipimport only accepts timestamp-checked pycs whose mtime matches the .py entry
                    py_compile.compile(str(f), cfile=str(pyc), dfile=str(arc), doraise=True,
                                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
                    z.write(pyc, arc.with_suffix(".pyc"))
    return dest


# -- the processes of a run ------------------------------------------------------------------------

def run_processes(token: str) -> list[int]:
    """Pids of the live processes whose environment carries RUN_TOKEN_ENV=token (Linux /proc; other
    users' processes are unreadable and skipped, a zombie's environment reads empty)."""
    needle = f"{RUN_TOKEN_ENV}={token}".encode()
    me = os.getpid()
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    out = []
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if needle in env.split(b"\0"):
            out.append(int(name))
    return out


def _parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat[stat.rindex(")") + 2:].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _silence_pyspark_noise() -> None:
    """Once the JVM is killed, py4j logs each failed call with a traceback through the root logger and
    pyspark warns that it cannot stop the JVM: neither is news to someone who pressed Ctrl-C."""
    logging.getLogger("py4j").setLevel(logging.CRITICAL + 1)
    root = logging.getLogger()  # py4j also logs through the module-level logging.exception()
    if not any(getattr(f, "kfc_py4j", False) for f in root.filters):
        class _DropPy4J(logging.Filter):
            kfc_py4j = True

            def filter(self, record: logging.LogRecord) -> bool:
                return f"{os.sep}py4j{os.sep}" not in record.pathname

        root.addFilter(_DropPy4J())
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"pyspark\.")


@contextlib.contextmanager
def _without_pyspark_sigint_handler() -> Iterator[None]:
    """SparkContext's constructor installs a SIGINT handler that calls into the JVM (py4j's locks):
    ours stays in place instead.  (pyspark's own module attribute; left alone if it moved.)"""
    import importlib

    module = None
    for name in ("pyspark.core.context", "pyspark.context"):
        with contextlib.suppress(ImportError):
            module = importlib.import_module(name)
            break
    if module is None or getattr(module, "signal", None) is not signal:
        yield
        return

    class _KeepOurs:
        SIGINT = signal.SIGINT

        @staticmethod
        def signal(signum: int, handler: Any) -> Any:
            return signal.getsignal(signum)

    module.signal = _KeepOurs  # type: ignore[attr-defined]
    try:
        yield
    finally:
        module.signal = signal  # type: ignore[attr-defined]



@contextlib.contextmanager
def _python_tempdir(path: Path) -> Iterator[None]:
    """Python's temporary files inside the run's directory while Spark starts: pyspark's gateway
    launch makes its connection-file directory with tempfile, and a Ctrl-C at the wrong moment would
    leave it behind; inside the run's directory it goes with it."""
    saved, tempfile.tempdir = tempfile.tempdir, str(path)
    try:
        yield
    finally:
        tempfile.tempdir = saved

class _Py4JNoiseOnInterrupt(logging.Filter):
    """py4j logs a KeyboardInterrupt in a call to the JVM (and each call to the JVM the watcher has
    killed) with a traceback, through the root logger: dropped once the run is interrupted.  In
    place from the start, since the main thread meets the interrupt before the watcher's kill."""

    LOGGERS = ("", "py4j.java_gateway", "py4j.clientserver")

    def __init__(self, interrupted: Callable[[], bool]):
        super().__init__()
        self.interrupted = interrupted

    def filter(self, record: logging.LogRecord) -> bool:
        return not (self.interrupted() and f"{os.sep}py4j{os.sep}" in record.pathname)

    def install(self) -> None:
        for name in self.LOGGERS:
            logging.getLogger(name).addFilter(self)

    def remove(self) -> None:
        for name in self.LOGGERS:
            logging.getLogger(name).removeFilter(self)


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
    local or on 127.0.0.1; the project's code is shipped with addPyFile when the master is not local.

    From `start()` to `stop()` (when started on the main thread) SIGINT and SIGTERM kill the run's
    processes and raise KeyboardInterrupt; `stop()` after that only cleans up, it never waits on
    the JVM.  A failed or interrupted `start()` cleans up itself."""

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
        self._py4j_noise = _Py4JNoiseOnInterrupt(lambda: self.interrupted)
        self._trap = Trap(_SIGNALS, on_signal=self._killed_by_signal, over_any_handler=True,
                          once=True)
        self._token: str | None = None
        self._launched = False  # this run started (or was starting) pyspark's gateway
        self._interrupted = False  # a KeyboardInterrupt (or a signal) stopped the run

    def _setenv(self, key: str, value: str, only_if_unset: bool = False) -> None:
        if only_if_unset and os.environ.get(key):
            return
        self._saved_env.setdefault(key, os.environ.get(key))
        os.environ[key] = value

    def _restore(self, key: str) -> None:
        if key in self._saved_env:
            old = self._saved_env.pop(key)
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old

    def start(self) -> Self:
        _pyspark()
        # Under spark-submit the JVM is already up and --master/--conf were given to it.
        submitted = bool(os.environ.get("PYSPARK_GATEWAY_PORT"))
        if not submitted:
            check_java()
            check_master(self.master)
        from pyspark import SparkContext

        if SparkContext._active_spark_context is not None:  # type: ignore[attr-defined]
            raise SparkJobError("a SparkContext is already running in this process; stop it or pass spark=")
        t0 = time.perf_counter()
        self._interrupted = False
        try:
            self._trap.arm()
            with self._trap.holding():  # no interrupt between making the run's directory and noting it
                self.run_dir = Path(tempfile.mkdtemp(prefix="kfc-spark-"))
            self._py4j_noise.install()
            with self.interrupt_guard(), _python_tempdir(self.run_dir):
                self._start(submitted)
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.perf_counter() - t0
        return self

    def _start(self, submitted: bool) -> None:
        from pyspark import SparkConf, SparkContext
        from pyspark.sql import SparkSession

        assert self.run_dir is not None
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
        if not submitted:  # spark-submit's JVM is not ours to kill
            self._token = uuid.uuid4().hex
            self._setenv(RUN_TOKEN_ENV, self._token)
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
        spark_conf = SparkConf().setAppName(self.app_name)
        if submitted:
            conf = dict(self.conf)
        else:
            spark_conf.setMaster(self.master)
        for k, v in conf.items():
            spark_conf.set(k, v)
        self._launched = True
        try:
            with _without_pyspark_sigint_handler():
                sc = SparkContext.getOrCreate(spark_conf)
        except Exception as e:  # noqa: BLE001 - Py4J/PySpark raise many kinds; all mean "no session"
            raise SparkJobError(f"could not start Spark ({self.master}): {one_line(e)}") from None
        finally:
            self._restore("TMPDIR")
            self._restore(RUN_TOKEN_ENV)
        self._silence_accumulator_server(sc)
        self.spark = SparkSession.builder.getOrCreate()
        sc.setLogLevel("ERROR")
        self.master = str(sc.master)
        if not is_local(self.master):
            sc.addPyFile(str(code_zip(self.run_dir / "kfc-code.zip")))

    @property
    def interrupted(self) -> bool:
        """A signal (or a KeyboardInterrupt) stopped this run."""
        return self._interrupted or self._trap.pressed

    @contextlib.contextmanager
    def interrupt_guard(self) -> Iterator[None]:
        """Around Spark work: an exception raised once a signal has killed the run is the interrupt
        itself (pyspark's cleanup then meets a dead JVM, and its errors would hide the Ctrl-C)."""
        try:
            yield
        except Exception:
            if self.interrupted:
                raise KeyboardInterrupt from None
            raise

    @property
    def sc(self) -> Any:
        return self.spark.sparkContext

    @property
    def parallelism(self) -> int:
        return max(1, int(self.sc.defaultParallelism))

    def jvm_pid(self) -> int | None:
        proc = getattr(getattr(self.sc, "_gateway", None), "proc", None)
        return getattr(proc, "pid", None)

    def versions(self) -> dict[str, str]:
        """Spark's, Java's and Python's versions as the driver sees them."""
        import platform

        out = {"spark": str(self.sc.version), "python": platform.python_version()}
        with contextlib.suppress(Exception):  # py4j: an attribute of the JVM view, best effort
            out["java"] = str(self.sc._jvm.java.lang.System.getProperty("java.version"))
        return out

    # -- signals and processes ---------------------------------------------------------------------

    def _killed_by_signal(self) -> None:
        """On the trap's watcher thread, once a signal came: kill first (pyspark's own cleanup calls
        into the JVM and can block), the main thread unwinds meanwhile."""
        self.kill(quiet=True)

    def _silence_accumulator_server(self, sc: Any) -> None:
        """pyspark's accumulator server prints an EOFError traceback when the JVM it serves dies; after
        an interrupt that is no news."""
        server = getattr(sc, "_accumulatorServer", None)
        if server is None:
            return
        report = server.handle_error

        def handle_error(request: Any, client_address: Any) -> None:
            if not self.interrupted:
                report(request, client_address)

        server.handle_error = handle_error

    def kill(self, quiet: bool = True) -> None:
        """SIGKILL every process this run launched and wait until they are gone (no call into the JVM).
        `quiet`: from now on, drop py4j's and pyspark's complaints about the dead JVM."""
        if not self._launched:
            return
        if quiet:
            _silence_pyspark_noise()
        gateway = self._gateway_proc()
        if gateway is not None and gateway.poll() is None:
            with contextlib.suppress(OSError):
                gateway.kill()
        me = os.getpid()
        children: set[int] = set()
        deadline = time.monotonic() + KILL_SECONDS
        while self._token and (pids := run_processes(self._token)) and time.monotonic() < deadline:
            for pid in pids:
                if pid != getattr(gateway, "pid", None) and _parent_of(pid) == me:
                    children.add(pid)  # e.g. spark-submit when pyspark's Popen was lost to Ctrl-C
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)
        for pid in children:  # reaped here, or they stay zombies until we exit
            while time.monotonic() < deadline:
                try:
                    if os.waitpid(pid, os.WNOHANG)[0]:
                        break
                except ChildProcessError:
                    break
                time.sleep(0.01)
        if gateway is not None:
            with contextlib.suppress(Exception):
                gateway.wait(timeout=max(0.1, deadline - time.monotonic()))

    def _gateway_proc(self) -> Any:
        from pyspark import SparkContext

        return getattr(SparkContext._gateway, "proc", None)  # type: ignore[attr-defined]

    # -- stopping ------------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop Spark and remove the scratch directory.  Interrupted (a signal, or a KeyboardInterrupt on
        its way up): kill, do not ask.  Otherwise spark.stop() gets GRACEFUL_STOP_SECONDS before the
        JVM is killed.  A signal during stop() kills at once and is raised when the cleanup is done."""
        was_interrupted = self.interrupted or isinstance(sys.exc_info()[1], KeyboardInterrupt)
        self._interrupted = was_interrupted
        stopped = True
        try:
            if self.spark is not None and not self._interrupted:
                stopped = self._stop_gracefully()
        except KeyboardInterrupt:
            self._interrupted = True  # a signal: the trap's watcher is killing the run
        try:
            with self._trap.holding():
                if self._trap.pressed:
                    self._trap.wait_for_work(KILL_SECONDS + 0.5)
                # Whatever is left: workers of a dead JVM, a JVM that would not stop, a cut-short launch.
                self.kill(quiet=self.interrupted or not stopped)
            if self._launched:
                self._forget_pyspark()
            for key in list(self._saved_env):
                self._restore(key)
            with self._trap.holding():  # removed whole, never cut short by a second Ctrl-C
                if self.run_dir is not None:
                    shutil.rmtree(self.run_dir, ignore_errors=True)
                    self.run_dir = None
        finally:
            self._trap.disarm()
            self._py4j_noise.remove()
            self._token = None
            self._launched = False
        if self.interrupted and not was_interrupted:
            raise KeyboardInterrupt

    def _stop_gracefully(self) -> bool:
        """spark.stop() and the gateway's exit, on a thread so that a hung JVM cannot hold us; whether
        they finished in time."""
        from pyspark import SparkContext

        spark, proc = self.spark, self._gateway_proc()
        gw = SparkContext._gateway  # type: ignore[attr-defined]

        def work() -> None:
            with contextlib.suppress(Exception):  # the JVM may already be gone; kill() follows anyway
                spark.stop()
            if gw is not None:
                with contextlib.suppress(Exception):
                    gw.shutdown()
            if proc is not None:
                with contextlib.suppress(Exception):  # the gateway JVM exits when its stdin closes
                    if proc.stdin:
                        proc.stdin.close()
                    proc.wait(timeout=GRACEFUL_STOP_SECONDS)

        t = threading.Thread(target=work, name="kfc-spark-stop", daemon=True)
        t.start()
        t.join(GRACEFUL_STOP_SECONDS)  # a signal here: KeyboardInterrupt, and the watcher kills
        return not t.is_alive()

    def _forget_pyspark(self) -> None:
        """The next SparkRun launches a fresh JVM with its own options (tmpdir, log config)."""
        from pyspark import SparkContext
        from pyspark.sql import SparkSession

        self.spark = None
        SparkContext._gateway = None  # type: ignore[attr-defined]
        SparkContext._jvm = None  # type: ignore[attr-defined]
        SparkContext._active_spark_context = None  # type: ignore[attr-defined]
        SparkSession._instantiatedSession = None  # type: ignore[attr-defined]
        SparkSession._activeSession = None  # type: ignore[attr-defined]

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["PACKAGES", "SparkJobError", "SparkRun", "check_java", "check_master", "code_zip", "is_local",
           "is_loopback", "one_line", "run_processes"]
