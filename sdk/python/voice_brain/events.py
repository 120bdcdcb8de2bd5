"""What the brain may be told beyond its turns, and how a ``session.say(...)`` went.

The caller events and turn metrics come only when the brain asks for them with
``session.configure({"events": {...}})``; an outbound call's machine detection comes when the
dial asked for it (``machine_detection`` ``hang_up`` or ``leave_message``). Mirrors the
TypeScript SDK's types.
"""

from dataclasses import dataclass, field
from typing import Dict, Optional


@dataclass(frozen=True)
class SayOutcome:
    """How a ``session.say(...)`` went."""

    turn_id: str
    """The turn the service gave the speech; ``""`` when it was refused."""
    heard: str
    """What the caller heard of it (all of it, or up to where they cut in)."""
    cut_off: bool
    """True when the caller cut it off (barge-in) or the call ended while it played."""
    refused: Optional[str] = None
    """Why the service refused it (``"the caller holds the floor"``, ...); ``None`` when spoken."""


@dataclass(frozen=True)
class UserSpeech:
    """The caller started or stopped speaking (only with ``events.speech``)."""

    speaking: bool
    """True when the caller started, False when their utterance ended."""
    over_bot: bool
    """The bot was speaking when the caller started: a barge-in (a Cancel) may follow."""


@dataclass(frozen=True)
class InterimText:
    """The recogniser's interim text while the caller speaks (only with ``events.interim_text``)."""

    text: str


@dataclass(frozen=True)
class TurnMetrics:
    """One turn's latency steps, once it is over (only with ``events.turn_metrics``)."""

    turn_id: str
    trigger: str
    """``"greeting"``, ``"speech"``, ``"typed"``, ``"idle"`` or ``"say"``."""
    latency_ms: Dict[str, float] = field(default_factory=dict)
    """Milliseconds per step, as the session record has them: ``end_of_turn``, ``to_brain``,
    ``brain``, ``synthesis``, ``end_to_first_audio``, ``recognition``; a step not measured on the
    turn is absent."""
    interrupted: bool = False
    """The caller cut the reply off."""


@dataclass(frozen=True)
class MachineDetected:
    """Who answered an outbound call placed with ``machine_detection`` ``hang_up`` or
    ``leave_message``; told once, before the greeting plays (docs/machine-detection.md)."""

    outcome: str
    """``"human"``: the greeting plays now. ``"machine"``: with hang_up the call ends (reason
    ``"machine"``); with leave_message nothing is spoken until ``on_beep``."""
    at_ms: int
    """Audio time since the answer when it was decided, in milliseconds."""
    why: str
    """The rule that decided: ``"short_greeting"``, ``"long_greeting"``, ``"tone"``, ..."""


@dataclass(frozen=True)
class Beep:
    """A leave_message call's machine now records: its beep ended (``heard``), or none is coming.
    The greeting given at session start plays from here, into the recording."""

    at_ms: int
    """Audio time since the answer, in milliseconds."""
    heard: bool
    """True when a beep was heard; False when none came (``why``: ``"silence"``, ``"timeout"``)."""
    hz: int = 0
    """The beep's pitch in Hz; 0 when none was heard."""
    why: str = ""
    """``""`` when heard; why none is expected otherwise."""
