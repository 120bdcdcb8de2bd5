"""The one place that knows which ``websockets`` API is installed.

websockets 13 added the asyncio API (``websockets.asyncio.server``/``.client``); 14 made it the
default and deprecated the legacy one, which later releases drop. Debian bookworm ships 10.4, which
has only the legacy API. So the SDK uses the asyncio API where it exists and the legacy one
otherwise, and nothing else of either: serving with a request check, dialling, and the request
path of a server connection.
"""

from http import HTTPStatus
from typing import Any, Awaitable, Callable, Optional, Tuple

import websockets
import websockets.exceptions

try:  # websockets >= 13
    from websockets.asyncio.client import connect as _connect
    from websockets.asyncio.server import serve as _serve

    ASYNCIO_API = True
except ImportError:  # websockets 10.4 - 12: only the legacy API
    _connect = websockets.connect
    _serve = websockets.serve
    ASYNCIO_API = False

Refusal = Tuple[HTTPStatus, str]
"""An HTTP answer instead of the upgrade: status and a plain-text body."""


def request_path(websocket: Any) -> str:
    """The path and query a server connection was opened with (``/brain?session_id=...``)."""
    request = getattr(websocket, "request", None)  # asyncio API
    if request is not None and getattr(request, "path", None) is not None:
        return request.path
    return getattr(websocket, "path", "") or ""  # legacy API


async def serve(
    handler: Callable[[Any], Awaitable[None]],
    host: str,
    port: int,
    refuse: Callable[[str], Optional[Refusal]],
    max_size: int,
) -> Any:
    """Listens; ``refuse(path)`` may answer a request with an HTTP error before the upgrade.

    Returns the server: ``.sockets``, ``.close()`` (also closes open connections) and
    ``await .wait_closed()`` mean the same in both APIs.
    """
    if ASYNCIO_API:

        def check(connection: Any, request: Any) -> Any:
            refused = refuse(request.path)
            return connection.respond(*refused) if refused else None

    else:

        async def check(path: str, _headers: Any) -> Any:  # type: ignore[misc]
            # A coroutine: the legacy API warns about a plain function here.
            refused = refuse(path)
            if not refused:
                return None
            status, text = refused
            return status, [("content-type", "text/plain")], text.encode()

    return await _serve(
        handler,
        host,
        port,
        process_request=check,
        compression=None,  # the worker's client offers none; frames are small protobuf
        max_size=max_size,
    )


def connect(url: str, **options: Any) -> Any:
    """Dials ``url`` (awaitable, and an async context manager) with the same API as ``serve``."""
    return _connect(url, **options)


def refused_status(err: BaseException) -> Optional[int]:
    """The HTTP status of a refused upgrade, from the ``InvalidHandshake`` that ``connect`` raised
    (``InvalidStatus`` in the asyncio API, ``InvalidStatusCode`` in the legacy one); else None."""
    status = getattr(getattr(err, "response", None), "status_code", None)
    status = status or getattr(err, "status_code", None)
    return int(status) if status else None
