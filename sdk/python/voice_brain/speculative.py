"""Speculative turns (``Config.turns.speculative``): the worker sends a ``UserTurn`` at the caller's
short pause and later confirms it (``TurnConfirmed``) or cancels it (``Cancel``: the caller went
on). The turn's speech units go out at once, since the worker holds their audio; anything else the
brain sends from inside such a turn (an action, a transfer, the end, a say, a config, a key
collection) would act at once, so it is held here until the turn is confirmed and dropped if it is
cancelled (docs/decisions.md, "Speculative turns in the SDKs"). The turn is found from the
``contextvars`` context the handler's task runs in, so a send from a helper, a ``call_later`` or a
task the handler created is held too. Mirrors ``sdk/brain/speculative.ts``.
"""

import asyncio
import contextvars
import logging
from typing import Callable, List, Optional, Tuple

log = logging.getLogger("voice_brain")

CANCELLED = "its speculative turn was cancelled"
"""Why a held send was dropped, as a say outcome's ``refused`` says it (both SDKs alike)."""

_current: "contextvars.ContextVar[Optional[SpeculativeTurn]]" = contextvars.ContextVar(
    "voice_brain_speculative_turn", default=None)

_Held = Tuple[str, Callable[[], None], Optional[Callable[[], None]]]


class SpeculativeTurn:
    """One speculative turn: whether the worker took it, and what waits for that."""

    def __init__(self, turn_id: str, where: str, on_cancel: Callable[[], None]) -> None:
        self.id = turn_id
        self._where = where  # "session=... turn=..." for log lines
        self._on_cancel = on_cancel  # sets the Turn's cancelled flag, its handler over or not
        self._state = "pending"
        self._held: List[_Held] = []
        self.confirmed: "asyncio.Future[bool]" = asyncio.get_running_loop().create_future()

    @property
    def pending(self) -> bool:
        """Still waiting for TurnConfirmed or Cancel."""
        return self._state == "pending"

    def hold(self, what: str, run: Callable[[], None],
             drop: Optional[Callable[[], None]] = None) -> None:
        """Holds ``run`` until the turn is confirmed; a cancelled turn drops it (and logs it)."""
        if self._state == "confirmed":
            run()
        elif self._state == "pending":
            self._held.append((what, run, drop))
        else:
            log.warning("dropped %s: speculative turn %s was cancelled %s", what, self.id,
                        self._where)
            if drop is not None:
                drop()

    def confirm(self) -> None:
        """TurnConfirmed: what was held goes out in the order it was asked, then ``True``."""
        if self._state != "pending":
            return
        self._state = "confirmed"
        for what, run, _ in self._take():
            try:
                run()
            except Exception as err:  # noqa: BLE001 - one held send must not stop the others
                log.error("a held %s failed %s", what, self._where, exc_info=err)
        if not self.confirmed.done():
            self.confirmed.set_result(True)

    def cancel(self, why: str = "was cancelled") -> None:
        """Cancel (or the call's end): what was held is dropped, then ``False``."""
        if self._state != "pending":
            return
        self._state = "cancelled"
        held = self._take()
        if held:
            log.warning("dropped %s: speculative turn %s %s before it was confirmed %s",
                        ", ".join(what for what, _, _ in held), self.id, why, self._where)
        for _, _, drop in held:
            if drop is not None:
                drop()
        self._on_cancel()
        if not self.confirmed.done():
            self.confirmed.set_result(False)

    def _take(self) -> List[_Held]:
        held, self._held = self._held, []
        return held


def enter(turn: Optional[SpeculativeTurn]) -> None:
    """Marks the running task (a turn's) and all it starts as part of ``turn``."""
    _current.set(turn)


def holding_turn() -> Optional[SpeculativeTurn]:
    """The speculative turn this code runs in (its sends go through ``hold``), or None."""
    return _current.get()


def act(what: str, run: Callable[[], None], drop: Optional[Callable[[], None]] = None) -> None:
    """Runs ``run`` now, or holds it for the speculative turn this code runs in."""
    turn = holding_turn()
    if turn is None:
        run()
    else:
        turn.hold(what, run, drop)
