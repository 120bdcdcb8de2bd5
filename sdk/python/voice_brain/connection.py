"""One brain WebSocket (one call): decodes ServiceFrames, runs the handlers, encodes BrainFrames.

Handlers never block the socket: each turn runs in its own asyncio task, so turns may overlap and
a Cancel reaches a turn while it is still working. Frames out go through one queue, so they leave
in the order the verbs were called (a Config sent in ``on_session_start`` precedes the greeting).
"""

import asyncio
import dataclasses
import inspect
import json
import logging
import time
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from google.protobuf.message import DecodeError, Message

from .config import config_dict
from .events import Beep, InterimText, MachineDetected, TurnMetrics, UserSpeech
from .proto import brain_pb2
from .says import Says
from .speculative import SpeculativeTurn, enter
from .session import (
    Dtmf,
    HeardText,
    IdleTurn,
    PhoneCall,
    Replay,
    Session,
    SessionEnd,
    TransferFailure,
    Turn,
)

log = logging.getLogger("voice_brain")

_CLOSED = object()  # the outbox's end marker


def _well_formed(text: str) -> str:
    # A lone surrogate (text cut mid-emoji) cannot be encoded as UTF-8; protobuf would refuse it.
    return text.encode("utf-8", "replace").decode("utf-8")


def _heard(h: "brain_pb2.Heard") -> HeardText:
    return HeardText(unit_id=h.unit_id, turn_id=h.turn_id, text=h.text, cut_off=h.cut_off)


def _init_of(text: str) -> Dict[str, Any]:
    if not text:
        return {}
    value = json.loads(text)
    return value if isinstance(value, dict) else {}


async def _resolve(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class Connection:
    """The protocol core for one socket. Made by ``Brain.accept``; ``run()`` serves the call."""

    def __init__(self, websocket: Any, handlers: Dict[str, Callable], session_id: str = "") -> None:
        self._ws = websocket
        self._handlers = handlers
        self._session_id = session_id
        self._seq = 0
        self._session: Optional[Session] = None
        self._ready: Optional[asyncio.Task] = None
        self._turns: Dict[str, Tuple[Any, asyncio.Task]] = {}
        # Speculative turns not yet confirmed or cancelled (their handler may be over).
        self._speculative: Dict[str, SpeculativeTurn] = {}
        self._background: Set[asyncio.Task] = set()
        self._final_heard: Optional[List[HeardText]] = None
        self._finished = False
        self._outbox: "asyncio.Queue[Any]" = asyncio.Queue()
        self._says = Says()

    # -- the socket ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Serves the call until the socket closes; ``on_session_end`` has run when it returns."""
        writer = asyncio.ensure_future(self._write())
        try:
            async for message in self._ws:
                if self._finished:
                    break
                await self._receive(message)
        except Exception as err:  # noqa: BLE001 - a closed or broken socket ends the call alike
            if not _is_closed(err):
                self._log("the brain socket failed", err)
        finally:
            await self._finish("disconnected", close_socket=False)
            self._outbox.put_nowait(_CLOSED)
            await asyncio.gather(writer, return_exceptions=True)

    async def close(self) -> None:
        """Closes the socket; the session ends as "disconnected" if no End came first."""
        try:
            await self._ws.close(1000, "brain closing")
        except Exception:  # noqa: BLE001 - already closed
            pass

    async def _write(self) -> None:
        while True:
            data = await self._outbox.get()
            if data is _CLOSED:
                return
            try:
                await self._ws.send(data)
            except Exception as err:  # noqa: BLE001 - the socket is closing; run() ends the call
                if not _is_closed(err):
                    self._log("send failed", err)
                return

    def _send(self, kind: str, body: Any) -> None:
        if self._finished:
            return
        self._seq += 1
        frame = brain_pb2.BrainFrame(seq=self._seq, timestamp_ms=int(time.time() * 1000))
        part = getattr(frame, kind)
        if isinstance(body, Message):
            part.CopyFrom(body)
        else:
            part.SetInParent()  # present even when every field is zero (an empty greeting)
            for key, value in body.items():
                setattr(part, key, _well_formed(value) if isinstance(value, str) else value)
        self._outbox.put_nowait(frame.SerializeToString())

    def _log(self, what: str, err: Optional[BaseException] = None, turn_id: str = "") -> None:
        # The error only, never the frame contents: they may carry the caller's words.
        where = f"session={self._session.id if self._session else self._session_id}"
        if turn_id:
            where += f" turn={turn_id}"
        log.error("%s %s", what, where, exc_info=err)

    # -- frames from the worker ---------------------------------------------------------------

    async def _receive(self, message: Any) -> None:
        if not isinstance(message, (bytes, bytearray)):
            return self._log("ignored a non-binary message")
        frame = brain_pb2.ServiceFrame()
        try:
            frame.ParseFromString(bytes(message))
        except DecodeError as err:
            return self._log("could not decode a ServiceFrame", err)
        kind = frame.WhichOneof("frame")
        if kind is None:
            return self._log("a ServiceFrame without a body, ignored")
        body = getattr(frame, kind)
        if kind == "session_start":
            return self._start(body)
        session = self._session
        if session is None:
            return self._log(f"{kind} before session_start, ignored")
        if kind == "user_turn":
            held = self._speculate(body.turn_id, lambda: turn._cancel()) \
                if body.speculative else None
            turn = Turn(body.turn_id, body.text, body.typed, body.speculative,
                        held.confirmed if held else None)
            self._start_turn(turn, self._handlers["on_turn"], held)
        elif kind == "turn_confirmed":
            confirmed = self._speculative.pop(body.turn_id, None)
            if confirmed:
                confirmed.confirm()
        elif kind == "user_idle":
            on_idle = self._handlers.get("on_user_idle")
            self._start_turn(IdleTurn(body.turn_id, body.idle_ms), on_idle)
        elif kind == "cancel":
            speculative = self._speculative.pop(body.turn_id, None)
            if speculative:
                speculative.cancel()  # before the task's cancel: its sends are dropped from now
            running = self._turns.pop(body.turn_id, None)
            if running:
                running[0]._cancel()
                running[1].cancel()
        elif kind == "heard":
            heard = _heard(body)
            session.heard.append(heard)
            self._says.heard(heard)
            self._call_soon("on_heard", heard, session)
        elif kind == "client_message":
            try:
                rtvi = json.loads(body.json)
            except ValueError as err:
                return self._log("client_message is not JSON, ignored", err)
            self._call_soon("on_rtvi", rtvi, session)
        elif kind == "dtmf":
            if session._keypad.press(body.digit):
                return  # a collection's key skips on_dtmf
            self._call_soon("on_dtmf", Dtmf(body.digit, body.duration_ms), session)
        elif kind == "transfer_failed":
            failure = TransferFailure(body.target, body.detail, body.reason)
            self._call_soon("on_transfer_failed", failure, session)
        elif kind == "machine_detected":
            outcome = "machine" if body.outcome == "machine" else "human"
            if session.phone is not None:
                session.phone = dataclasses.replace(session.phone, machine_detection=outcome)
            detected = MachineDetected(outcome, body.at_ms, body.why)
            self._call_soon("on_machine_detected", detected, session)
        elif kind == "beep":
            self._call_soon("on_beep", Beep(body.at_ms, body.heard, body.hz, body.why), session)
        elif kind == "say_started":
            self._says.started(body.say_id, body.turn_id)
        elif kind == "say_refused":
            self._says.refused(body.say_id, body.detail)
        elif kind == "user_speech":
            self._call_soon("on_user_speech", UserSpeech(body.speaking, body.over_bot), session)
        elif kind == "interim_text":
            self._call_soon("on_interim_text", InterimText(body.text), session)
        elif kind == "turn_metrics":
            metrics = TurnMetrics(body.turn_id, body.trigger, dict(body.latency_ms),
                                  body.interrupted)
            self._call_soon("on_turn_metrics", metrics, session)
        elif kind == "finalize":
            self._final_heard = [_heard(h) for h in body.heard]
            session.heard = list(self._final_heard)
        elif kind == "end":
            await self._finish(body.reason, close_socket=True)

    def _start(self, body: "brain_pb2.SessionStart") -> None:
        if self._session is not None:
            return self._log("second session_start, ignored")
        if self._session_id and body.session_id != self._session_id:
            self._log(f"session_start id {body.session_id} differs from the URL's session_id")
        try:
            init = _init_of(body.init_json)
        except ValueError as err:
            self._log("init_json is not JSON, using {}", err)
            init = {}
        config = config_dict(body.config) if body.HasField("config") else {}
        phone = None
        if body.HasField("phone"):
            p = body.phone
            phone = PhoneCall(getattr(p, "from"), p.to, p.carrier, p.call_id,
                              "outbound" if p.direction == "outbound" else "inbound",
                              p.machine_detection or None)
        replay = None
        if body.HasField("replay"):
            replay = Replay(body.replay.original_session_id)
        session = Session(body.session_id, body.agent_id, init, config, self._send, phone,
                          replay, self._say)
        session.trace_context = {k: v for k, v in (("traceparent", body.traceparent),
                                                   ("tracestate", body.tracestate)) if v}
        self._session = session
        self._ready = asyncio.ensure_future(self._greet(session))

    async def _greet(self, session: Session) -> None:
        greeting: Any = ""
        on_start = self._handlers.get("on_session_start")
        try:
            greeting = (await _resolve(on_start(session)) if on_start else "") or ""
        except Exception as err:  # noqa: BLE001 - a failing handler must not fail the call
            self._log("on_session_start failed; greeting is empty", err)
        if not isinstance(greeting, str):
            self._log(f"on_session_start returned a {type(greeting).__name__}; greeting is empty")
            greeting = ""
        # Queued after every Config that on_session_start caused: voice and language apply to it.
        self._send("greeting", {"text": greeting})

    def _say(self, text: str) -> "asyncio.Future[Any]":
        say_id, outcome = self._says.open()
        if self._finished:
            self._says.end([])
        else:
            self._send("say", {"say_id": say_id, "text": text})
        return outcome

    # -- turns --------------------------------------------------------------------------------

    def _speculate(self, turn_id: str, on_cancel: Callable[[], None]) -> SpeculativeTurn:
        where = f"session={self._session.id if self._session else self._session_id} turn={turn_id}"
        turn = SpeculativeTurn(turn_id, where, on_cancel)
        self._speculative[turn_id] = turn
        return turn

    def _start_turn(self, turn: Any, handler: Optional[Callable],
                    speculative: Optional[SpeculativeTurn] = None) -> None:
        if turn.id in self._turns:
            return self._log("a turn id already running, ignored", turn_id=turn.id)
        task = asyncio.ensure_future(self._run_turn(turn, handler, speculative))
        self._turns[turn.id] = (turn, task)

    async def _run_turn(self, turn: Any, handler: Optional[Callable],
                        speculative: Optional[SpeculativeTurn] = None) -> None:
        session = self._session
        assert session is not None and self._ready is not None
        # The task's own context: the handler and every task or timer it starts belong to the
        # speculative turn, so their sends wait for its confirmation.
        enter(speculative)

        def live() -> bool:
            return not turn.cancelled and not self._finished

        count = 0

        def speak(text: Any) -> None:
            nonlocal count
            if not isinstance(text, str):
                raise TypeError(f"a turn handler yielded a {type(text).__name__}, not a str")
            if text.strip() == "" or not live():
                return
            count += 1
            unit = {"turn_id": turn.id, "unit_id": f"{turn.id}.{count}", "text": text}
            self._send("speech_unit", {**unit, "last": False})

        reply: Any = None
        try:
            # Shielded: a cancelled turn must not cancel the greeting every turn waits for.
            await asyncio.shield(self._ready)
            if not live() or handler is None:
                return
            reply = await _resolve(handler(turn, session))
            if reply is None or isinstance(reply, str):
                speak(reply or "")
            elif hasattr(reply, "__aiter__"):
                async for text in reply:
                    if not live():
                        break  # what the generator yields after Cancel is dropped
                    speak(text)
            elif hasattr(reply, "__iter__"):
                for text in reply:
                    if not live():
                        break
                    speak(text)
            else:
                raise TypeError(f"a turn handler returned a {type(reply).__name__}")
        except asyncio.CancelledError:
            if live():
                raise  # not our cancellation (the server is going down): let it through
        except Exception as err:  # noqa: BLE001 - a failing turn ends, the call goes on
            if live():
                self._log("turn handler failed", err, turn.id)
        finally:
            await _close_generator(reply)
            if self._turns.get(turn.id, (None, None))[0] is turn:
                del self._turns[turn.id]
            if live():
                last = {"turn_id": turn.id, "unit_id": f"{turn.id}.end", "text": ""}
                self._send("speech_unit", {**last, "last": True})

    def _call_soon(self, name: str, *args: Any) -> None:
        handler = self._handlers.get(name)
        if handler is None:
            return
        try:
            result = handler(*args)
        except Exception as err:  # noqa: BLE001
            return self._log(f"{name} failed", err)
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            self._background.add(task)
            task.add_done_callback(lambda t: self._settled(name, t))

    def _settled(self, name: str, task: asyncio.Task) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self._log(f"{name} failed", task.exception())

    async def _finish(self, reason: str, close_socket: bool) -> None:
        if self._finished:
            return
        self._finished = True
        for speculative in list(self._speculative.values()):
            speculative.cancel("ended with the call")
        self._speculative.clear()
        for turn, task in list(self._turns.values()):
            turn._cancel()
            task.cancel()
        self._turns.clear()
        session = self._session
        if session is not None:
            session.ended = True
            heard = self._final_heard if self._final_heard is not None else session.heard
            self._says.end(list(heard))
            session._keypad.end()
            on_end = self._handlers.get("on_session_end")
            if on_end:
                try:
                    await _resolve(on_end(session, SessionEnd(reason, list(heard))))
                except Exception as err:  # noqa: BLE001
                    self._log("on_session_end failed", err)
        if close_socket:
            await self.close()


async def _close_generator(reply: Any) -> None:
    # Runs the generator's `finally` now (it may hold a model stream), not at garbage collection.
    try:
        if inspect.isasyncgen(reply):
            await reply.aclose()
        elif inspect.isgenerator(reply):
            reply.close()
    except Exception as err:  # noqa: BLE001
        log.error("closing a turn's generator failed", exc_info=err)


def _is_closed(err: BaseException) -> bool:
    import websockets.exceptions

    return isinstance(err, websockets.exceptions.ConnectionClosed)
