"""The keypad collection step: ``session.collect_digits(...)`` gathers the caller's keys until
enough are in, a terminator key, a timeout or the call's end. Mirrors ``sdk/brain/keypad.ts``
(sdk/python/python_and_typescript_sdks_say_and_report_events_alike.test.ts holds them alike).
Written here rather than taken from a library: it is a few timers over the SDK's own frames.
"""

import asyncio
from typing import Any, Callable, Optional

KEYS = "0123456789*#ABCD"
"""The keys a phone sends (RFC 4733 events 0-15)."""
MAX_DIGITS = 64
TIMEOUT_MIN_MS = 100
TIMEOUT_MAX_MS = 600_000


class CollectedDigits:
    """The keys a collection gathered and why it stopped.

    Attributes:
        digits: the keys pressed, in order, without the terminator (``""`` when none).
        reason: why it stopped: ``"max_digits"``, ``"terminator"``, ``"digit_timeout"``,
            ``"total_timeout"``, ``"ended"`` (the call ended first) or ``"cancelled"`` (it was
            asked for in a speculative turn that was cancelled before it was confirmed: nothing
            was said or collected).
        sensitive: the collection was marked sensitive; ``repr`` and ``str`` then show ``*`` per
            digit (read ``digits`` by name, and never log it).
        prompt_refused: why the prompt's Say was refused (the caller did not hear it), or None.
    """

    __slots__ = ("digits", "reason", "sensitive", "prompt_refused")

    def __init__(self, digits: str, reason: str, sensitive: bool = False,
                 prompt_refused: Optional[str] = None) -> None:
        self.digits = digits
        self.reason = reason
        self.sensitive = sensitive
        self.prompt_refused = prompt_refused

    @property
    def shown(self) -> str:
        """The digits as logs may show them: ``*`` per digit when sensitive."""
        return "*" * len(self.digits) if self.sensitive else self.digits

    def __repr__(self) -> str:
        refused = "" if self.prompt_refused is None else f", prompt_refused={self.prompt_refused!r}"
        return f"CollectedDigits(digits={self.shown!r}, reason={self.reason!r}{refused})"

    __str__ = __repr__

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, CollectedDigits):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable-looking; compared by value


def _fail(why: str) -> ValueError:
    return ValueError(f"session.collect_digits: {why}")


def _timeout(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or \
            not TIMEOUT_MIN_MS <= value <= TIMEOUT_MAX_MS:
        raise _fail(f"{name} must be an integer of {TIMEOUT_MIN_MS} to {TIMEOUT_MAX_MS} ms, "
                    f"got {value!r}")
    return value


class _Options:
    def __init__(self, max_digits: Optional[int], terminator: Optional[str],
                 digit_timeout_ms: int, total_timeout_ms: int, prompt: Optional[str],
                 sensitive: bool) -> None:
        if max_digits is not None and (isinstance(max_digits, bool)
                                       or not isinstance(max_digits, int)
                                       or not 1 <= max_digits <= MAX_DIGITS):
            raise _fail(f"max_digits must be an integer of 1 to {MAX_DIGITS}, got {max_digits!r}")
        if terminator is not None and (not isinstance(terminator, str) or len(terminator) != 1
                                       or terminator not in KEYS):
            raise _fail(f"terminator must be one key of {KEYS}, got {terminator!r}")
        if max_digits is None and terminator is None:
            raise _fail("give max_digits, terminator or both")
        if prompt is not None and (not isinstance(prompt, str) or prompt.strip() == ""):
            raise _fail("prompt must be a non-empty string")
        if not isinstance(sensitive, bool):
            raise _fail(f"sensitive must be a bool, got {sensitive!r}")
        self.max_digits = max_digits or MAX_DIGITS
        self.terminator = terminator or ""
        self.digit_timeout = _timeout("digit_timeout_ms", digit_timeout_ms) / 1000
        self.total_timeout = _timeout("total_timeout_ms", total_timeout_ms) / 1000
        self.prompt = prompt or ""
        self.sensitive = sensitive


class Keypad:
    """One session's keypad: at most one collection at a time.

    ``ended``, ``sensitive_now``, ``set_sensitive`` and ``say`` are the session's."""

    def __init__(self, ended: Callable[[], bool], sensitive_now: Callable[[], bool],
                 set_sensitive: Callable[[bool], None],
                 say: Callable[[str], "asyncio.Future[Any]"]) -> None:
        self._ended = ended
        self._sensitive_now = sensitive_now
        self._set_sensitive = set_sensitive
        self._say = say
        self._current: Optional[_Collection] = None

    def collect(self, options: _Options) -> "asyncio.Future[CollectedDigits]":
        if self._current is not None:
            raise RuntimeError("session.collect_digits: a collection is already running on this "
                               "call; await it first")
        future: "asyncio.Future[CollectedDigits]" = asyncio.get_running_loop().create_future()
        if self._ended():
            future.set_result(CollectedDigits("", "ended", options.sensitive))
            return future
        self._current = _Collection(self, options, future)
        try:
            self._current.begin()
        except BaseException:
            self._current = None  # a session with no worker to say to (made by hand, in a test)
            raise
        return future

    def press(self, digit: str) -> bool:
        """A key from the worker: True when a collection took it (it then skips on_dtmf)."""
        if self._current is None:
            return False
        self._current.press(digit)
        return True

    def end(self) -> None:
        """The call ended: a running collection stops with what it has."""
        if self._current is not None:
            self._current.stop("ended")


class _Collection:
    def __init__(self, keypad: Keypad, options: _Options,
                 future: "asyncio.Future[CollectedDigits]") -> None:
        self._keypad = keypad
        self._o = options
        self._future = future
        self._digits = ""
        self._done = False
        self._clocks = False
        self._digit_timer: Optional[asyncio.TimerHandle] = None
        self._total_timer: Optional[asyncio.TimerHandle] = None
        self._prompt_refused: Optional[str] = None
        self._was_sensitive = False
        self._said: "Optional[asyncio.Future[Any]]" = None  # the prompt's Say

    def begin(self) -> None:
        keypad, o = self._keypad, self._o
        if o.sensitive:
            self._was_sensitive = keypad._sensitive_now()
            if not self._was_sensitive:
                keypad._set_sensitive(True)  # before the prompt and any key
        if o.prompt:
            self._said = keypad._say(o.prompt)
            self._said.add_done_callback(self._prompt_over)
        else:
            self._start_clocks()

    def _prompt_over(self, said: "asyncio.Future[Any]") -> None:
        if said.cancelled():
            return self._start_clocks()
        refused = said.result().refused
        if refused is not None:
            self._prompt_refused = refused
        self._start_clocks()

    def _start_clocks(self) -> None:
        if self._done or self._clocks:
            return
        self._clocks = True
        loop = asyncio.get_running_loop()
        self._total_timer = loop.call_later(self._o.total_timeout, self.stop, "total_timeout")
        self._arm_digit_timer()

    def _arm_digit_timer(self) -> None:
        if self._digit_timer is not None:
            self._digit_timer.cancel()
        self._digit_timer = asyncio.get_running_loop().call_later(
            self._o.digit_timeout, self.stop, "digit_timeout")

    def press(self, digit: str) -> None:
        if self._done:
            return
        if self._o.terminator and digit == self._o.terminator:
            return self.stop("terminator")
        self._digits += digit
        if len(self._digits) >= self._o.max_digits:
            return self.stop("max_digits")
        if self._clocks:  # before the prompt ends, the clocks wait for it
            self._arm_digit_timer()

    def stop(self, reason: str) -> None:
        if self._done:
            return
        self._done = True
        for timer in (self._digit_timer, self._total_timer):
            if timer is not None:
                timer.cancel()
        keypad = self._keypad
        keypad._current = None
        # Put back the flag before resolving, so whatever the brain sends next is not masked.
        if self._o.sensitive and not self._was_sensitive and not keypad._ended():
            keypad._set_sensitive(False)
        # Keys typed ahead may fill the collection while its prompt still plays; the result
        # waits for the prompt to end, or what the brain says next would be refused.
        if self._said is None or self._said.done():
            self._resolve(reason)
        else:
            self._said.add_done_callback(lambda _: self._resolve(reason))

    def _resolve(self, reason: str) -> None:
        if not self._future.done():
            self._future.set_result(CollectedDigits(self._digits, reason, self._o.sensitive,
                                                    self._prompt_refused))
