"""The brain SDK for Python: write the conversational side of a voice call as a few callbacks.

The service's media worker dials the brain at ``{brain_url}?session_id={id}`` over a WebSocket
and speaks the protobuf frames of ``proto/voice/v1/brain.proto``; this package hides them.

Example::

    from voice_brain import Brain

    brain = Brain()

    @brain.on_session_start
    def greet(session):
        return "Hello!"

    @brain.on_turn
    async def answer(turn, session):
        yield f"You said: {turn.text}"

    brain.run(port=8790)  # prints ws://127.0.0.1:8790/brain
"""

from .brain import Brain, ServedBrain
from .config import ConfigDict, ConfigError
from .keypad import CollectedDigits
from .events import Beep, InterimText, MachineDetected, SayOutcome, TurnMetrics, UserSpeech
from .session import (
    Confirmation,
    Dtmf,
    HeardText,
    IdleTurn,
    PhoneCall,
    Replay,
    Reply,
    Session,
    SessionEnd,
    TransferFailure,
    Turn,
)
from .units import UnitSplitter, speech_units

__all__ = [
    "Beep",
    "Brain",
    "ServedBrain",
    "CollectedDigits",
    "Confirmation",
    "ConfigDict",
    "ConfigError",
    "Dtmf",
    "HeardText",
    "IdleTurn",
    "InterimText",
    "MachineDetected",
    "PhoneCall",
    "Replay",
    "Reply",
    "SayOutcome",
    "Session",
    "SessionEnd",
    "TransferFailure",
    "Turn",
    "TurnMetrics",
    "UnitSplitter",
    "UserSpeech",
    "speech_units",
]
__version__ = "0.1.0"
