"""Ctrl-C (and SIGTERM) with signal handlers that take no locks.

Python runs a signal handler in the main thread between two bytecodes, wherever that thread is:
inside `Event.set`, a `with lock:` block, logging, `Popen.poll`, a py4j call.  A handler that takes
a lock can block on one its own thread already holds, for ever.  So the handler here only sets a
flag, writes one byte to a self-pipe and, where that is safe, raises KeyboardInterrupt.  A watcher
thread, woken by the byte, does the work: the caller's `on_signal` (kill a run's processes), and the
interrupt again a moment later when it could not be raised (see `_swallowed`) or was swallowed.

    trap = Trap(on_signal=kill_everything)
    with trap.armed():
        work()
    if trap.pressed: ...
"""

from __future__ import annotations

import _thread
import contextlib
import gc
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

RETRY_SECONDS = 0.05  # an interrupt that could not be raised is tried again this much later
REDELIVER_SECONDS = 0.5  # raised, but the armed block is still running: raised again


class Trap:
    """While armed (on the main thread, with Python's default handlers in place): a signal of
    `signals` sets `pressed`, wakes the watcher and raises KeyboardInterrupt in the main thread,
    unless `holding()` (a cleanup that must finish), where the exception would be swallowed, or,
    with `once`, after the first one."""

    def __init__(self, signals: tuple[int, ...] = (signal.SIGINT,), on_signal: Callable[[], None] | None = None,
                 *, over_any_handler: bool = False, once: bool = False):
        self.signals = signals
        self.once = once  # raise one KeyboardInterrupt per arming; later signals only set `pressed`
        self.over_any_handler = over_any_handler
        self.on_signal = on_signal
        self.pressed = False  # written by the handler only: a plain attribute, no lock
        self.signum = 0
        self._raised = False
        self._hold = 0
        self._signals = 0  # handler runs so far (a plain int: the handler takes no locks)
        self._outer: Trap | None = None
        self._armed = False
        self._previous: dict[int, signal.Handlers | Callable[..., object] | int | None] = {}
        self._pipe: tuple[int, int] | None = None
        self._watcher: threading.Thread | None = None
        self._stop = threading.Event()
        self._work_done = threading.Event()
        self._previous_hook: Callable[[Any], object] = sys.unraisablehook

    # -- the handler: a flag, a byte, maybe a raise -------------------------------------------------

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        self.pressed = True
        self._signals += 1
        self.signum = self.signum or signum
        if self._outer is not None:
            self._outer.pressed = True  # the enclosing command sees it too
        if self._pipe is not None:
            with contextlib.suppress(OSError):  # full (the watcher is awake anyway) or closed
                os.write(self._pipe[1], b"!")
        if self._hold or (self.once and self._raised) or _swallowed(frame):
            return
        self._raised = True
        raise KeyboardInterrupt

    # -- the watcher ----------------------------------------------------------------------------------

    def _watch(self, read_fd: int) -> None:
        did_work = False
        while not self._stop.is_set():
            try:
                data = os.read(read_fd, 256)
            except OSError:
                return
            if not data or self._stop.is_set():
                return
            if not did_work:
                did_work = True
                if self.on_signal is not None:
                    with contextlib.suppress(Exception):  # best effort; the interrupt goes on regardless
                        self.on_signal()
                self._work_done.set()
            # Not raised (a gc callback, a __del__, a hold) or raised and swallowed: deliver it again.
            if self.once and self._raised:
                continue
            wait = REDELIVER_SECONDS if self._raised else RETRY_SECONDS
            if self._stop.wait(wait):
                return
            if not self._hold:
                _thread.interrupt_main(signal.SIGINT)  # runs _handler again, in the main thread

    def wait_for_work(self, timeout: float) -> bool:
        """Whether the watcher has finished `on_signal` (call from ordinary code, not a handler)."""
        return self._work_done.wait(timeout)

    # -- arming ---------------------------------------------------------------------------------------

    def arm(self) -> bool:
        """Install the handlers (over an outer Trap's too); False (and nothing done) off the main
        thread, or, unless `over_any_handler`, where SIGINT is ignored (a parent said so) or handled
        by someone else."""
        if self._armed or threading.current_thread() is not threading.main_thread():
            return self._armed
        current = signal.getsignal(signal.SIGINT)
        ours = current is signal.default_int_handler or isinstance(getattr(current, "__self__", None), Trap)
        if not self.over_any_handler and not ours:
            return False
        outer = getattr(current, "__self__", None)
        self._outer = outer if isinstance(outer, Trap) else None
        self.pressed, self._raised, self.signum = False, False, 0
        self._stop.clear()
        self._work_done.clear()
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)
        self._pipe = (read_fd, write_fd)
        self._watcher = threading.Thread(target=self._watch, args=(read_fd,), name="kfc-interrupts", daemon=True)
        self._watcher.start()
        for sig in self.signals:
            self._previous[sig] = signal.signal(sig, self._handler)
        self._previous_hook = sys.unraisablehook
        sys.unraisablehook = self._unraisable
        self._armed = True
        return True

    def _unraisable(self, unraisable: Any) -> None:
        """An interrupt raised where Python cannot raise it (a weakref callback: WeakSet, importlib's
        module locks) is reported as unraisable, "Exception ignored in …" and a traceback; the watcher
        delivers it again, so it is dropped here.  Anything else goes to the previous hook."""
        exc_type = unraisable.exc_type
        if self.pressed and exc_type is not None and issubclass(exc_type, KeyboardInterrupt):
            return
        self._previous_hook(unraisable)

    def disarm(self) -> None:
        """Stop the watcher (it delivers nothing after this) and put the previous handlers back."""
        if not self._armed:
            return
        # Held throughout: an interrupt the watcher delivered just before stopping runs our handler
        # here (inside Event.set or the join); raised, it would cut this short, leaving the watcher
        # delivering again every half second or our handler installed.
        signals = self._signals
        self._hold += 1
        try:
            self._stop.set()
            assert self._pipe is not None and self._watcher is not None
            with contextlib.suppress(OSError):
                os.write(self._pipe[1], b"q")
            self._watcher.join(5)
            for sig, previous in self._previous.items():
                signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
            self._previous.clear()
            if sys.unraisablehook == self._unraisable:
                sys.unraisablehook = self._previous_hook
            for fd in self._pipe:
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._pipe, self._watcher, self._armed, self._outer = None, None, False, None
        finally:
            self._hold -= 1
        if self._signals != signals and not self._raised:
            raise KeyboardInterrupt  # a Ctrl-C that came while disarming, never raised: not lost

    @contextlib.contextmanager
    def armed(self) -> Iterator[Trap]:
        self.arm()
        try:
            yield self
        finally:
            self.disarm()

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """A cleanup that must not be cut: signals only set `pressed` meanwhile."""
        self._hold += 1
        try:
            yield
        finally:
            self._hold -= 1


def _swallowed(frame: FrameType | None) -> bool:
    """Whether a KeyboardInterrupt raised in `frame` would be swallowed ("Exception ignored in …"):
    it runs in a gc callback (Hypothesis registers one; collections happen all the time) or in a
    __del__ method."""
    callbacks = set()
    for cb in list(gc.callbacks):
        code = getattr(getattr(cb, "__func__", cb), "__code__", None)
        if code is not None:
            callbacks.add(code)
    while frame is not None:
        if frame.f_code in callbacks or frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False
