"""The call's trace as the Python SDK shows it: ``session.trace_context`` is SessionStart's
traceparent / tracestate as a carrier ``opentelemetry.propagate.extract`` reads (set keys only),
and ``{}`` on a call the worker does not trace."""

import logging
import unittest

from voice_brain import Brain

from voice_brain.testing import call

logging.getLogger("voice_brain").setLevel(logging.CRITICAL)

PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


class TraceContextTest(unittest.IsolatedAsyncioTestCase):
    async def test_trace_context_carries_session_start_and_is_empty_untraced(self):
        seen = {}
        brain = Brain(on_session_start=lambda s: seen.__setitem__(s.id, s.trace_context),
                      on_turn=lambda t, s: None)
        starts = [
            {"session_id": "ses_t", "traceparent": PARENT, "tracestate": "vendor=abc"},
            {"session_id": "ses_p"},
        ]
        for start in starts:
            async with call(brain, start["session_id"], start=False) as worker:
                await worker.send("session_start", start)
                await worker.next()  # the greeting
        self.assertEqual(seen, {
            "ses_t": {"traceparent": PARENT, "tracestate": "vendor=abc"},
            "ses_p": {},
        })


if __name__ == "__main__":
    unittest.main()
