"""A replayed session as the Python SDK shows it: ``session.replay`` names the recorded session
(SessionStart.replay); a real call's is ``None``."""

import logging
import unittest

from voice_brain import Brain, Replay

from voice_brain.testing import call

logging.getLogger("voice_brain").setLevel(logging.CRITICAL)

REPLAY_ID = "ses_a-replay-0123abcd"


class ReplayTest(unittest.IsolatedAsyncioTestCase):
    async def test_session_replay_names_the_recorded_session_and_is_none_on_a_call(self):
        seen = {}
        brain = Brain(on_session_start=lambda s: seen.__setitem__(s.id, s.replay),
                      on_turn=lambda t, s: None)
        starts = [
            {"session_id": REPLAY_ID, "replay": {"original_session_id": "ses_a"}},
            {"session_id": "ses_b"},
        ]
        for start in starts:
            async with call(brain, start["session_id"], start=False) as worker:
                await worker.send("session_start", start)
                await worker.next()  # the greeting
        self.assertEqual(seen, {REPLAY_ID: Replay("ses_a"), "ses_b": None})


if __name__ == "__main__":
    unittest.main()
