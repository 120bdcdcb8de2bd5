"""A replayed session as the Python SDK shows it: ``session.replay`` names the recorded session
(SessionStart.replay); a real call's is ``None``."""

import logging
import unittest

from voice_brain import Brain, Replay

from voice_brain.testing import call

logging.getLogger("voice_brain").setLevel(logging.CRITICAL)


class ReplayTest(unittest.IsolatedAsyncioTestCase):
    async def test_session_replay_names_the_recorded_session(self):
        seen = {}
        brain = Brain(on_session_start=lambda s: seen.setdefault("replay", s.replay),
                      on_turn=lambda t, s: None)
        async with call(brain, "ses_a-replay-0123abcd", start=False) as worker:
            await worker.send("session_start", {"session_id": "ses_a-replay-0123abcd",
                                                "replay": {"original_session_id": "ses_a"}})
            await worker.next()
        self.assertEqual(seen["replay"], Replay("ses_a"))

    async def test_a_real_call_is_no_replay(self):
        seen = {}
        brain = Brain(on_session_start=lambda s: seen.setdefault("replay", s.replay),
                      on_turn=lambda t, s: None)
        async with call(brain) as worker:
            await worker.next()
        self.assertIsNone(seen["replay"])


if __name__ == "__main__":
    unittest.main()
