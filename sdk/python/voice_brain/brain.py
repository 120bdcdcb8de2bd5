"""A brain: handlers plus the ways to attach them to sockets. ``accept`` runs one call on a
connection from your own ``websockets`` server; ``serve`` and ``run`` start one for you."""

import asyncio
import signal
from http import HTTPStatus
from typing import Any, Callable, Dict, Optional, Set
from urllib.parse import parse_qs, urlsplit

from . import sockets
from .connection import Connection

HANDLER_NAMES = (
    "on_session_start",
    "on_turn",
    "on_heard",
    "on_rtvi",
    "on_user_idle",
    "on_dtmf",
    "on_transfer_failed",
    "on_machine_detected",
    "on_beep",
    "on_user_speech",
    "on_interim_text",
    "on_turn_metrics",
    "on_session_end",
)

# The worker refuses brain frames over 64 KiB; its own frames (Finalize lists every unit the
# caller heard) can be longer on a long call, so this side accepts up to 16 MiB.
MAX_FRAME_BYTES = 16 * 1024 * 1024


class ServedBrain:
    """A running brain server, from ``Brain.serve``. Usable as an async context manager.

    Attributes:
        url: the URL to give as the agent's ``brain_url``, e.g. ``ws://127.0.0.1:8790/brain``.
        host, port, path: where it listens (``port`` is the real one when 0 was asked for).
    """

    def __init__(self, brain: "Brain", server: Any, host: str, path: Optional[str]) -> None:
        self._brain = brain
        self._server = server
        self.host = host
        self.port: int = server.sockets[0].getsockname()[1]
        self.path = path
        shown = f"[{host}]" if ":" in host else host
        self.url = f"ws://{shown}:{self.port}{path or '/'}"

    async def close(self) -> None:
        """Stops listening and closes open calls (each ends as ``"disconnected"``)."""
        self._server.close()
        await self._brain._close_all()
        await self._server.wait_closed()

    async def wait_closed(self) -> None:
        """Returns when the server has stopped."""
        await self._server.wait_closed()

    async def __aenter__(self) -> "ServedBrain":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


class Brain:
    """The conversational side of a voice call, as a few callbacks.

    Give the callbacks as keyword arguments or register them with the decorators of the same
    names (``@brain.on_turn``). Each may be a plain function or ``async``; only ``on_turn`` is
    required. Every callback gets the call's ``Session`` (the same object for one call):

    - ``on_session_start(session) -> str | None``: the call starts. Returns the greeting; may
      ``session.configure(...)`` first (those Config frames go before the greeting). Turns wait
      for it.
    - ``on_turn(turn, session) -> Reply``: the caller finished a turn. Usually an async
      generator: each yielded string is one speech unit, sent at once. When the caller
      interrupts, the worker cancels the turn: ``turn.cancelled`` becomes True, the task running
      the handler is cancelled (an ``await`` in it raises ``asyncio.CancelledError``) and the
      generator is closed (``aclose()``), so its ``finally`` runs. Turns may overlap; a handler
      that raises is logged and its turn still ends, so the call goes on. With speculative turns
      on (``session.configure({"turns": {"speculative": True}})``) a turn may come at the
      caller's pause (``turn.speculative``): ``await turn.confirmed()`` before a side effect.
    - ``on_heard(heard, session)``: the caller heard (part of) a speech unit (``HeardText``).
    - ``on_rtvi(message, session)``: the page sent a message (RTVI JSON, verbatim, as a dict).
      Cannot speak; may dispatch, configure or end.
    - ``on_user_idle(idle, session) -> Reply``: caller and bot silent for the configured idle
      timeout (``config.idle.timeout_ms > 0``). Replies like ``on_turn``; None lets it pass.
    - ``on_dtmf(dtmf, session)``: the caller pressed a key on a phone call (``Dtmf``: ``digit``,
      ``duration_ms``). Cannot speak; may dispatch, configure, end or transfer.
    - ``on_transfer_failed(failure, session)``: a ``session.transfer(...)`` did not happen
      (``TransferFailure``: ``target``, ``detail``); the call goes on.
    - ``on_machine_detected(detected, session)``: who answered an outbound call placed with
      machine detection on (``MachineDetected``: ``outcome`` ``"human"`` or ``"machine"``,
      ``at_ms``, ``why``); ``session.phone.machine_detection`` is set by then. On a machine with
      ``leave_message`` nothing is spoken until ``on_beep``.
    - ``on_beep(beep, session)``: a leave_message call's machine now records (``Beep``: ``at_ms``,
      ``heard``, ``hz``, ``why``); the greeting plays from here.
    - ``on_session_end(session, end)``: the call is over; ``end.reason`` and ``end.heard`` (what
      the caller heard, in order). Runs exactly once per started session.
    """

    def __init__(self, **handlers: Callable) -> None:
        unknown = set(handlers) - set(HANDLER_NAMES)
        if unknown:
            raise TypeError(
                f"Brain: unknown handler {', '.join(sorted(unknown))}; "
                f"expected {', '.join(HANDLER_NAMES)}"
            )
        self._handlers: Dict[str, Callable] = {}
        for name, fn in handlers.items():
            self._register(name, fn)
        self._open: Set[Connection] = set()

    def _register(self, name: str, fn: Callable) -> Callable:
        if not callable(fn):
            raise TypeError(f"Brain: {name} must be callable")
        self._handlers[name] = fn
        return fn

    # Decorators: @brain.on_turn etc. Each returns the function unchanged.
    def on_session_start(self, fn: Callable) -> Callable:
        """Registers the session-start callback (returns the greeting)."""
        return self._register("on_session_start", fn)

    def on_turn(self, fn: Callable) -> Callable:
        """Registers the turn callback (an async generator of speech units, usually)."""
        return self._register("on_turn", fn)

    def on_heard(self, fn: Callable) -> Callable:
        """Registers the callback told what the caller heard of each unit."""
        return self._register("on_heard", fn)

    def on_rtvi(self, fn: Callable) -> Callable:
        """Registers the page-message callback."""
        return self._register("on_rtvi", fn)

    def on_user_idle(self, fn: Callable) -> Callable:
        """Registers the idle callback (replies like ``on_turn``)."""
        return self._register("on_user_idle", fn)

    def on_dtmf(self, fn: Callable) -> Callable:
        """Registers the callback told each key the caller presses on a phone call."""
        return self._register("on_dtmf", fn)

    def on_transfer_failed(self, fn: Callable) -> Callable:
        """Registers the callback told when a ``session.transfer(...)`` did not happen."""
        return self._register("on_transfer_failed", fn)

    def on_machine_detected(self, fn: Callable) -> Callable:
        """Registers the callback told who answered an outbound call (a ``MachineDetected``);
        only on a call placed with ``machine_detection`` ``hang_up`` or ``leave_message``."""
        return self._register("on_machine_detected", fn)

    def on_beep(self, fn: Callable) -> Callable:
        """Registers the callback told when a leave_message call's machine records (a ``Beep``:
        its beep ended, or none is coming); the greeting plays from then."""
        return self._register("on_beep", fn)

    def on_user_speech(self, fn: Callable) -> Callable:
        """Registers the callback told when the caller starts or stops speaking (a ``UserSpeech``);
        needs ``session.configure({"events": {"speech": True}})``."""
        return self._register("on_user_speech", fn)

    def on_interim_text(self, fn: Callable) -> Callable:
        """Registers the callback told the interim recognition (an ``InterimText``) while the
        caller speaks; needs ``events.interim_text``."""
        return self._register("on_interim_text", fn)

    def on_turn_metrics(self, fn: Callable) -> Callable:
        """Registers the callback told each turn's latency steps (a ``TurnMetrics``) once the turn
        is over; needs ``events.turn_metrics``."""
        return self._register("on_turn_metrics", fn)

    def on_session_end(self, fn: Callable) -> Callable:
        """Registers the session-end callback."""
        return self._register("on_session_end", fn)

    async def accept(self, websocket: Any, session_id: Optional[str] = None) -> None:
        """Runs one call over an open ``websockets`` connection (a server handler's argument).

        Returns when the socket has closed and ``on_session_end`` has run. ``session_id`` is
        the URL's, if known (taken from the request's path otherwise; checked against the
        SessionStart, for logs).
        """
        if "on_turn" not in self._handlers:
            raise TypeError("Brain: on_turn must be given")
        if session_id is None:
            session_id = _session_id_of(sockets.request_path(websocket))
        connection = Connection(websocket, self._handlers, session_id)
        self._open.add(connection)
        try:
            await connection.run()
        finally:
            self._open.discard(connection)

    async def serve(
        self, host: str = "127.0.0.1", port: int = 8790, path: Optional[str] = "/brain"
    ) -> ServedBrain:
        """Listens for the worker: one WebSocket per call at ``ws://host:port{path}?session_id=``.

        Args:
            host: address to listen on (``0.0.0.0`` for every interface).
            port: port to listen on; 0 picks a free one (see ``ServedBrain.port``).
            path: only this path is served (others get 404); None serves every path. A request
                without ``session_id`` gets 400.

        The worker pings a quiet connection every 5 s; ``websockets`` answers with a pong by
        itself while the event loop runs. Keep blocking work (a synchronous model call) off the
        loop (``asyncio.to_thread``): a brain that answers nothing for 15 s fails its call
        ``brain_unresponsive``.
        """
        if "on_turn" not in self._handlers:
            raise TypeError("Brain: on_turn must be given")

        def refuse(request_path: str) -> Optional[sockets.Refusal]:
            if path is not None and urlsplit(request_path).path != path:
                return HTTPStatus.NOT_FOUND, "not found\n"
            if not _session_id_of(request_path):
                return HTTPStatus.BAD_REQUEST, "missing session_id\n"
            return None

        async def handler(websocket: Any) -> None:
            await self.accept(websocket, _session_id_of(sockets.request_path(websocket)))

        server = await sockets.serve(handler, host, port, refuse, MAX_FRAME_BYTES)
        return ServedBrain(self, server, host, path)

    def run(self, host: str = "127.0.0.1", port: int = 8790, path: Optional[str] = "/brain") -> None:
        """Serves until SIGINT or SIGTERM (then closes open calls), printing the URL first.

        A blocking convenience for scripts: ``brain.run(port=8790)``.
        """

        async def main() -> None:
            served = await self.serve(host, port, path)
            print(f"brain listening on {served.url}", flush=True)
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)
            await stop.wait()
            await served.close()

        asyncio.run(main())

    async def _close_all(self) -> None:
        await asyncio.gather(*(c.close() for c in list(self._open)), return_exceptions=True)


def _session_id_of(request_path: str) -> str:
    values = parse_qs(urlsplit(request_path).query).get("session_id") or [""]
    return values[0]
