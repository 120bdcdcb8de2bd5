"""The brain's ``session.say(...)`` requests in flight on one call.

Each waits for the worker's answer (SayStarted or SayRefused) and then for the Heard of its one
unit, whose id is the say id, and settles its future with how it went. The call ending settles
whatever is left. Mirrors ``sdk/brain/says.ts``.
"""

import asyncio
from typing import Dict, List, Optional

from .events import SayOutcome
from .session import HeardText


class _Pending:
    def __init__(self, future: "asyncio.Future[SayOutcome]") -> None:
        self.future = future
        self.turn_id = ""


class Says:
    def __init__(self) -> None:
        self._n = 0
        self._pending: Dict[str, _Pending] = {}

    def open(self) -> "tuple[str, asyncio.Future[SayOutcome]]":
        """A new say id and the future of its outcome."""
        self._n += 1
        say_id = f"say.{self._n}"
        future: "asyncio.Future[SayOutcome]" = asyncio.get_running_loop().create_future()
        self._pending[say_id] = _Pending(future)
        return say_id, future

    def started(self, say_id: str, turn_id: str) -> None:
        pending = self._pending.get(say_id)
        if pending:
            pending.turn_id = turn_id

    def refused(self, say_id: str, detail: str) -> None:
        self._settle(say_id, SayOutcome(turn_id="", heard="", cut_off=False, refused=detail))

    def heard(self, h: HeardText) -> bool:
        """A Heard: settles the say whose unit it is (False when it is no say's)."""
        pending = self._pending.get(h.unit_id)
        if pending is None or pending.turn_id == "" or pending.turn_id != h.turn_id:
            return False
        self._settle(h.unit_id, SayOutcome(turn_id=h.turn_id, heard=h.text, cut_off=h.cut_off))
        return True

    def end(self, final_heard: List[HeardText]) -> None:
        """The call ended: a say in the final list settles with it; one not started was never
        spoken; one started and not in the list was cut off unheard."""
        for h in final_heard:
            self.heard(h)
        for say_id, pending in list(self._pending.items()):
            outcome: Optional[SayOutcome]
            if pending.turn_id:
                outcome = SayOutcome(turn_id=pending.turn_id, heard="", cut_off=True)
            else:
                outcome = SayOutcome(turn_id="", heard="", cut_off=False,
                                     refused="the session ended")
            self._settle(say_id, outcome)

    def _settle(self, say_id: str, outcome: SayOutcome) -> None:
        pending = self._pending.pop(say_id, None)
        if pending is not None and not pending.future.done():
            pending.future.set_result(outcome)
