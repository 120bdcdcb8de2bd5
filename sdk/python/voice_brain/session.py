"""The public shapes of the brain SDK: what handlers receive and may return."""

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any, AsyncIterable, Awaitable, Callable, Dict, Iterable, List, Optional, Union

from .config import ConfigDict, apply_config, config_dict, config_message
from .events import SayOutcome
from .keypad import CollectedDigits, Keypad, _Options
from .speculative import CANCELLED, act, holding_turn

Reply = Union[AsyncIterable[str], Iterable[str], str, None, Awaitable[Optional[str]]]
"""What a turn handler returns. Each string an async generator (or any (async) iterable) yields is
one speech unit, sent as soon as it is yielded; a plain string (or a coroutine returning one) is a
single unit; ``None`` lets the turn pass. Empty strings are skipped."""


@dataclass(frozen=True)
class HeardText:
    """What the caller heard of one speech unit."""

    unit_id: str
    turn_id: str
    text: str
    """The part of the unit the caller actually heard."""
    cut_off: bool
    """True when the caller interrupted the unit."""


@dataclass(frozen=True)
class SessionEnd:
    """Why and how a session ended, given to ``on_session_end``."""

    reason: str
    """The service's reason (e.g. ``hangup``, ``brain_ended``), or ``"disconnected"`` when the
    socket closed without an End."""
    heard: List[HeardText] = field(default_factory=list)
    """Everything the caller heard, in order."""


@dataclass(frozen=True)
class PhoneCall:
    """Who rang and how, on a phone call (``session.phone``; ``None`` on a web call)."""

    from_number: str
    """The caller's number (E.164 when the carrier gives one); ``""`` when withheld."""
    to: str
    """The number the caller dialled."""
    carrier: str
    """``"sip"``, ``"twilio"``, ``"plivo"`` or ``"exotel"``."""
    call_id: str
    """The carrier's id for the call (SIP Call-ID, Twilio CallSid, ...)."""
    direction: str = "inbound"
    """``"outbound"`` when the service placed the call (``from_number`` is then the service's
    number, ``to`` the callee's); ``"inbound"`` when the caller rang."""
    machine_detection: Optional[str] = None
    """An outbound call's answering-machine outcome (``"human"`` or ``"machine"``) once detected
    (``on_machine_detected`` says when; ``session.phone`` is then replaced with it set); ``None``
    until then, on an inbound call, and with detection off."""


@dataclass(frozen=True)
class Replay:
    """A replay of a recorded session (``session.replay``; ``None`` on a real call)."""

    original_session_id: str
    """The id of the recorded session being replayed."""


@dataclass(frozen=True)
class Dtmf:
    """A key the caller pressed on a phone call, reported once it is released."""

    digit: str
    """``"0"``-``"9"``, ``"*"``, ``"#"``, ``"A"``-``"D"``."""
    duration_ms: int


@dataclass(frozen=True)
class TransferFailure:
    """A ``session.transfer(...)`` that did not happen; the call goes on."""

    target: str
    detail: str
    """Why, e.g. ``"REFER answered 403 Forbidden"``."""
    reason: str = ""
    """The same as one word: ``"no_answer"``, ``"busy"``, ``"declined"``, ``"refused"`` or
    ``"failed"``; empty from a service older than it."""


def warm_fields(whisper: str, ring_timeout_ms: int) -> dict:
    """A warm transfer's Transfer fields, checked here so a bad value raises in the brain."""
    if not isinstance(whisper, str):
        raise ValueError("session.transfer: whisper must be a string")
    if ring_timeout_ms and not (isinstance(ring_timeout_ms, int)
                                and 5000 <= ring_timeout_ms <= 120000):
        raise ValueError("session.transfer: ring_timeout_ms must be 0 or 5000 to 120000")
    if not whisper.strip():
        return {}
    return {"whisper": whisper.strip(), "ring_timeout_ms": ring_timeout_ms}


class _Cancellable:
    """The worker may cancel a turn (the caller interrupted); see ``cancelled``."""

    def __init__(self, turn_id: str) -> None:
        self.id = turn_id
        self._cancelled = asyncio.Event()

    @property
    def cancelled(self) -> bool:
        """True once the worker cancelled this turn (its Cancel frame, or the session ended).

        The SDK also cancels the task running the handler, so an ``await`` in it raises
        ``asyncio.CancelledError`` and an async generator is closed. The flag is for work that
        cancellation does not reach: a thread (``asyncio.to_thread``), a task of your own, code
        that catches ``CancelledError``."""
        return self._cancelled.is_set()

    async def wait_cancelled(self) -> None:
        """Returns when the turn is cancelled (for work racing against the interruption)."""
        await self._cancelled.wait()

    def _cancel(self) -> None:
        self._cancelled.set()


class Confirmation:
    """Whether a turn was taken, to ``await`` (``await turn.confirmed()``; see ``Turn``)."""

    __slots__ = ("_future",)

    def __init__(self, future: "Optional[asyncio.Future[bool]]") -> None:
        self._future = future

    def __call__(self) -> "Confirmation":
        return self  # turn.confirmed() and turn.confirmed are the same awaitable

    def __await__(self) -> Any:
        return self._wait().__await__()

    async def _wait(self) -> bool:
        if self._future is None:
            return True
        # Shielded: cancelling the awaiting task must not cancel the turn's one future.
        return await asyncio.shield(self._future)

    def __bool__(self) -> bool:
        # Without await it would always be true: a side effect on every speculative turn.
        raise TypeError("turn.confirmed() must be awaited: `if await turn.confirmed():`")


class Turn(_Cancellable):
    """A finished caller turn the brain should answer.

    Attributes:
        id: the turn id; speech units for this turn carry it.
        text: what the caller said (finalized recognition), or typed.
        typed: the caller typed the turn on the page (RTVI ``send-text``, the client's
            ``sendText``) instead of speaking it: ``text`` is exactly what was typed.
        speculative: only with speculative turns on
            (``session.configure({"turns": {"speculative": True}})``): the caller paused and may
            go on, so the worker holds this reply's audio until it confirms the turn, and cancels
            it if the caller goes on (their words come again at the head of the next turn). Speech
            units still go out at once; the other verbs called from this turn wait for the
            confirmation and are dropped if it is cancelled. See ``confirmed()``.
    """

    def __init__(self, turn_id: str, text: str, typed: bool = False, speculative: bool = False,
                 confirmation: "Optional[asyncio.Future[bool]]" = None) -> None:
        super().__init__(turn_id)
        self.text = text
        self.typed = typed
        self.speculative = speculative
        self._confirmation = confirmation

    @property
    def confirmed(self) -> "Confirmation":
        """``await turn.confirmed()``: True once the caller's turn is taken: at once for a turn
        that is not speculative, when the worker confirms a speculative one (``TurnConfirmed``).
        False when a speculative turn is cancelled (the caller went on) or the call ends first;
        the handler's own task is then cancelled as on any Cancel, so ``False`` reaches code in
        other tasks. Never raises once awaited.

        Await it before a side effect the SDK cannot hold for you (an order written to your
        database, a message sent)::

            yield f"Placing order {number}."     # spoken only if the turn is confirmed
            if not await turn.confirmed():       # the caller went on: record nothing
                return
            await orders.place(number)

        Used as a truth value without ``await`` (``if turn.confirmed():``) it raises
        ``TypeError`` rather than always passing.
        """
        return Confirmation(self._confirmation)

    def __repr__(self) -> str:
        return (f"Turn(id={self.id!r}, typed={self.typed}, speculative={self.speculative}, "
                f"cancelled={self.cancelled})")


class IdleTurn(_Cancellable):
    """The caller and the bot have both been quiet for ``idle_ms``: the brain has the floor.

    Attributes:
        id: the turn id the brain answers on.
        idle_ms: how long both sides have been silent, in milliseconds.
    """

    def __init__(self, turn_id: str, idle_ms: int) -> None:
        super().__init__(turn_id)
        self.idle_ms = idle_ms

    def __repr__(self) -> str:
        return f"IdleTurn(id={self.id!r}, idle_ms={self.idle_ms}, cancelled={self.cancelled})"


class Session:
    """One call, as the brain sees it. Handlers of the same call get the same object.

    Its verbs called from a speculative turn not yet confirmed (``turn.speculative``) are held
    until the turn is confirmed and dropped if it is cancelled; arguments are checked at once.

    Attributes:
        id: the session id (``session_id`` of the connect request).
        agent_id: the agent the session was created for.
        init: the session's ``init`` object from the connect request; ``{}`` when none was given.
        config: the effective config (proto3 JSON with enum names): the worker's at session
            start, then every ``configure`` applied.
        heard: what the caller actually heard so far, in order (replaced by the final list when
            the worker finalizes the call).
        ended: True once the session has ended (End received or socket closed); verbs then do
            nothing.
        phone: a ``PhoneCall`` (caller, dialled number, carrier) on a phone call; ``None`` on a
            web call.
        replay: a ``Replay`` when this session replays a recorded one (``deno task replay``):
            nobody is on the line and ``id`` is the replay's own; keep side effects on real
            systems (bookings, payments) out of it. ``None`` on a real call.
        trace_context: the call's W3C Trace Context (``traceparent``, ``tracestate``; set ones
            only, ``{}`` when the worker exports no traces), for the brain's own spans to join
            the call's trace: ``opentelemetry.propagate.extract(session.trace_context)``.
    """

    def __init__(
        self,
        session_id: str,
        agent_id: str,
        init: Dict[str, Any],
        config: ConfigDict,
        send: Callable[[str, Any], None],
        phone: Optional[PhoneCall] = None,
        replay: Optional[Replay] = None,
        say: Optional[Callable[[str], "asyncio.Future[Any]"]] = None,
    ) -> None:
        self.id = session_id
        self.phone = phone
        self.replay = replay
        self.trace_context: Dict[str, str] = {}  # set from SessionStart (connection.py)
        self.agent_id = agent_id
        self.init = init
        self.config = config
        self.heard: List[HeardText] = []
        self.ended = False
        self._send = send
        self._say = say
        self._end_sent = False
        self._keypad = Keypad(lambda: self.ended,
                              lambda: (self.config.get("keypad") or {}).get("sensitive") is True,
                              lambda on: self.configure({"keypad": {"sensitive": on}}), self.say)

    def __repr__(self) -> str:
        return f"Session(id={self.id!r}, agent_id={self.agent_id!r}, ended={self.ended})"

    def configure(self, config: ConfigDict) -> None:
        """Changes voice, language or idle timeout now (sends a Config frame).

        Enum values are given by name, e.g.
        ``session.configure({"tts": {"voice": "VOICE_ARJUN", "language": "LANGUAGE_HI"}})``.
        Called in ``on_session_start``, it applies to the greeting.

        Raises:
            ConfigError: for an unknown field or enum name or an out-of-range number; nothing
                is sent.
        """
        message = config_message(config)  # raises before anything is sent

        def configure() -> None:
            self.config = apply_config(self.config, config_dict(message))
            self._send("config", message)

        act("config", configure)

    def dispatch(self, type: str, data: Any = None) -> None:
        """Sends a typed action to the page, which receives it as an RTVI ``server-message``
        ``{type, data}``. ``data`` must be JSON-serialisable (``None`` is sent as ``null``).
        The type ``call-ended`` is the worker's own notice of why a call ended: do not use it.

        Raises:
            ValueError: for an empty type or a NaN/infinite number; TypeError: for data that is
                not JSON-serialisable. Nothing is sent then.
        """
        if not isinstance(type, str) or type == "":
            raise ValueError("session.dispatch: type must be a non-empty string")
        # Compact and unescaped, as JSON.stringify writes it; NaN is not JSON, so it is an error.
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        act("action", lambda: self._send("action", {"type": type, "json": text}))

    def end(self, reason: str = "ended_by_brain") -> None:
        """Asks the service to end the call (sends EndSession once; later calls do nothing).
        Units already sent are still spoken first. On a phone call the service then hangs up
        (SIP BYE)."""

        def end() -> None:
            if self._end_sent:
                return
            self._end_sent = True
            self._send("end_session", {"reason": reason})

        act("end_session", end)

    def transfer(self, target: str, whisper: str = "", ring_timeout_ms: int = 0) -> None:
        """Hands a phone call to ``target``: a ``tel:`` or ``sip:`` URI or an E.164 number
        (``"+918041234567"``). The service lets the bot finish what it is saying, then transfers
        (SIP REFER); when that works the session ends with reason ``"transferred"``, when not
        ``on_transfer_failed`` says why and the call goes on. A web call refuses it the same way.

        With ``whisper`` it is a warm transfer: the caller hears hold audio while the service
        calls the person (ringing at most ``ring_timeout_ms``, 5000 to 120000; 0: 30000), speaks
        the whisper to them only, then joins the two.

        Raises:
            ValueError: for an empty target or a bad ring_timeout_ms; nothing is sent.
        """
        if not isinstance(target, str) or target.strip() == "":
            raise ValueError(
                "session.transfer: target must be a tel: or sip: URI or an E.164 number")
        body = {"target": target.strip(), **warm_fields(whisper, ring_timeout_ms)}
        act("transfer", lambda: self._send("transfer", body))

    def say(self, text: str) -> "asyncio.Future[Any]":
        """Speaks ``text`` outside a turn: on a key press, a page message, a timer or an outside
        event. The service gives it a turn of its own and speaks it as one unit under the rules of
        any reply (barge-in cuts it, ``on_heard`` reports it), but only when the floor is free:
        while the caller speaks, a reply is awaited or playing, or the call is ending, it is
        refused, never queued.

        Returns a future of a ``SayOutcome``: what the caller heard of it once it is spoken or cut
        off, or ``refused`` with why. It never raises, so it may be left unawaited.

        Raises:
            ValueError: for text that is not a non-empty string; nothing is sent.
        """
        if not isinstance(text, str) or text.strip() == "":
            raise ValueError("session.say: text must be a non-empty string")
        if self._say is None:
            raise RuntimeError("session.say: this session is not connected to a worker")
        say = self._say
        turn = holding_turn()
        if turn is None:
            return say(text)
        outcome: "asyncio.Future[Any]" = asyncio.get_running_loop().create_future()
        turn.hold("say", lambda: _chain(say(text), outcome),
                  lambda: _settle(outcome, SayOutcome("", "", False, CANCELLED)))
        return outcome

    def collect_digits(self, max_digits: Optional[int] = None, terminator: Optional[str] = None,
                       digit_timeout_ms: int = 5000, total_timeout_ms: int = 30_000,
                       prompt: Optional[str] = None,
                       sensitive: bool = False) -> "asyncio.Future[CollectedDigits]":
        """Collects the caller's keys (a menu choice, an account number, a PIN).

        Stops at ``max_digits`` keys (1-64), at the ``terminator`` key (e.g. ``"#"``, not part of
        the digits), when no key comes for ``digit_timeout_ms`` (from the last key; for the first,
        from the start), after ``total_timeout_ms`` in all, or when the call ends. Give
        ``max_digits``, ``terminator`` or both. ``prompt`` is said first (a ``say``): keys pressed
        while it plays count (type-ahead) and the clocks start once it is over; a Say is refused
        while the bot holds the floor (inside a turn), and then the clocks start at once and
        ``prompt_refused`` says why. Keys a collection takes do not reach ``on_dtmf``.

        ``sensitive=True`` (a PIN, card or account number) sends Config ``keypad.sensitive`` true
        for the collection's duration (the worker then writes ``*`` for each key in everything it
        keeps) and puts back what was in effect after; the result's ``repr`` masks the digits.
        Your own code must not log ``digits`` either.

        Returns a future of a ``CollectedDigits(digits, reason, sensitive, prompt_refused)``,
        ``reason`` one of ``"max_digits"``, ``"terminator"``, ``"digit_timeout"``,
        ``"total_timeout"``, ``"ended"``, ``"cancelled"`` (asked for in a speculative turn that
        was cancelled: nothing was said or collected); it never raises::

            got = await session.collect_digits(prompt="Key in your account number, then hash.",
                                               max_digits=12, terminator="#")

        Inside a speculative turn not yet confirmed the collection starts once the turn is
        confirmed (a ``RuntimeError`` for another collection running then sets the future's
        exception).

        Raises:
            ValueError: for bad options; RuntimeError: while another collection runs. Nothing
                is sent then.
        """
        options = _Options(max_digits, terminator, digit_timeout_ms, total_timeout_ms, prompt,
                           sensitive)  # raises for bad options, inside a speculative turn too
        turn = holding_turn()
        if turn is None:
            return self._keypad.collect(options)
        got: "asyncio.Future[CollectedDigits]" = asyncio.get_running_loop().create_future()

        def collect() -> None:
            try:
                _chain(self._keypad.collect(options), got)
            except RuntimeError as err:  # another collection started meanwhile
                if not got.done():
                    got.set_exception(err)

        turn.hold("collect_digits", collect,
                  lambda: _settle(got, CollectedDigits("", "cancelled", options.sensitive)))
        return got


def _settle(future: "asyncio.Future[Any]", value: Any) -> None:
    if not future.done():
        future.set_result(value)


def _chain(inner: "asyncio.Future[Any]", outer: "asyncio.Future[Any]") -> None:
    """Settles ``outer`` with ``inner``'s result once it has one (a held verb's future)."""
    inner.add_done_callback(lambda f: None if f.cancelled() else _settle(outer, f.result()))
