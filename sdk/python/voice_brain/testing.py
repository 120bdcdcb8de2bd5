"""Test a brain without the service: a fake media worker that dials it over a real socket.

``FakeWorker`` is the worker's side of the brain socket, a real ``websockets`` client that sends
ServiceFrames and decodes BrainFrames with the generated classes, as the media worker does::

    from voice_brain.testing import call, units

    async with call(brain) as worker:             # serves the brain, dials it, SessionStart
        await worker.next()                       # the greeting frame
        await worker.send("user_turn", {"turn_id": "t1", "text": "hello"})
        assert units(await worker.until_last("t1")) == [["You said: hello", False], ["", True]]
"""

import asyncio
import contextlib
import inspect
import json
import time
from typing import Any, AsyncIterator, Dict, List, Optional

from google.protobuf import json_format

from . import sockets
from .brain import Brain
from .proto import brain_pb2

GIVE_UP_S = 5.0  # how long next() waits before failing the test instead of hanging it

# MessageToDict's option to print zero fields (a unit's `last: false`) was renamed in protobuf
# 4.25 (Python) and the old name removed in 5.26: take whichever this protobuf has.
_WITH_ZEROS = (
    {"always_print_fields_with_no_presence": True}
    if "always_print_fields_with_no_presence"
    in inspect.signature(json_format.MessageToDict).parameters
    else {"including_default_value_fields": True}
)


class FakeWorker:
    """Dials a served brain like the media worker: ``{url}?session_id={id}``."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self._seq = 0

    @classmethod
    async def dial(cls, url: str, session_id: str) -> "FakeWorker":
        """Connects to ``{url}?session_id={session_id}``."""
        return cls(await sockets.connect(f"{url}?session_id={session_id}", compression=None))

    def frame(self, kind: str, body: Dict[str, Any]) -> bytes:
        """One encoded ServiceFrame with the next seq; ``body`` is proto3 JSON."""
        self._seq += 1
        frame = brain_pb2.ServiceFrame(seq=self._seq, timestamp_ms=int(time.time() * 1000))
        getattr(frame, kind).SetInParent()
        json_format.ParseDict(body, getattr(frame, kind))
        return frame.SerializeToString()

    async def send(self, kind: str, body: Dict[str, Any]) -> None:
        """Sends one ServiceFrame, e.g. ``send("user_turn", {"turn_id": "t1", "text": "hi"})``."""
        await self.ws.send(self.frame(kind, body))

    async def start(self, session_id: str = "ses_1", init: Any = None,
                    config: Optional[Dict[str, Any]] = None) -> None:
        """Sends SessionStart (agent ``ag_1``); ``config`` is proto3 JSON with enum names."""
        body: Dict[str, Any] = {"session_id": session_id, "agent_id": "ag_1"}
        if init is not None:
            body["init_json"] = json.dumps(init)
        if config is not None:
            body["config"] = config
        await self.send("session_start", body)

    async def next(self, timeout: float = GIVE_UP_S) -> Dict[str, Any]:
        """The next BrainFrame as a dict: ``{"frame": "greeting", "greeting": {...}, ...}``."""
        data = await asyncio.wait_for(self.ws.recv(), timeout)
        frame = brain_pb2.BrainFrame()
        frame.ParseFromString(data)
        out = json_format.MessageToDict(frame, preserving_proto_field_name=True, **_WITH_ZEROS)
        out["frame"] = frame.WhichOneof("frame")
        return out

    async def take(self, n: int) -> List[Dict[str, Any]]:
        """The next ``n`` BrainFrames."""
        return [await self.next() for _ in range(n)]

    async def until_last(self, turn_id: str) -> List[Dict[str, Any]]:
        """Frames up to and including the turn's last unit."""
        frames = []
        while True:
            f = await self.next()
            frames.append(f)
            unit = f.get("speech_unit")
            if unit and unit["turn_id"] == turn_id and unit["last"]:
                return frames

    async def silent_for(self, seconds: float) -> bool:
        """True when the brain sends nothing for ``seconds``."""
        try:
            await asyncio.wait_for(self.ws.recv(), seconds)
            return False
        except asyncio.TimeoutError:
            return True

    async def close(self) -> None:
        """Closes the socket (the brain's session ends ``"disconnected"`` unless End came)."""
        await self.ws.close()


def units(frames: List[Dict[str, Any]]) -> List[List[Any]]:
    """[[text, last], ...] of the speech units among ``frames``."""
    return [[f["speech_unit"]["text"], f["speech_unit"]["last"]] for f in frames
            if f["frame"] == "speech_unit"]


@contextlib.asynccontextmanager
async def call(brain: Brain, session_id: str = "ses_1", start: bool = True,
               **start_fields: Any) -> AsyncIterator[FakeWorker]:
    """Serves ``brain`` on a free port, dials it and (unless ``start=False``) sends SessionStart
    with ``start_fields`` (``init``, ``config``)."""
    served = await brain.serve(host="127.0.0.1", port=0, path="/brain")
    worker = await FakeWorker.dial(served.url, session_id)
    try:
        if start:
            await worker.start(session_id, **start_fields)
        yield worker
    finally:
        await worker.close()
        await served.close()
