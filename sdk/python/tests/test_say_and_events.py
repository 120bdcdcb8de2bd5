"""session.say and the opt-in caller events over a real socket, as sdk/brain/says.test.ts does
for the TypeScript SDK."""

import asyncio
import logging
import unittest

from voice_brain import Brain, InterimText, SayOutcome, TurnMetrics, UserSpeech
from voice_brain.testing import call

logging.getLogger("voice_brain").setLevel(logging.CRITICAL)


class SayTest(unittest.IsolatedAsyncioTestCase):
    async def test_say_resolves_with_what_was_heard_or_why_it_was_refused(self):
        outcomes = []

        async def on_dtmf(dtmf, session):
            outcomes.append(await session.say(f"You pressed {dtmf.digit}."))

        brain = Brain(on_session_start=lambda s: "Hi.", on_turn=lambda t, s: None,
                      on_dtmf=on_dtmf)
        async with call(brain) as worker:
            self.assertEqual((await worker.next())["frame"], "greeting")
            await worker.send("dtmf", {"digit": "1", "duration_ms": 120})
            self.assertEqual((await worker.next())["say"],
                             {"say_id": "say.1", "text": "You pressed 1."})
            await worker.send("say_started", {"say_id": "say.1", "turn_id": "t3"})
            await worker.send("heard", {"unit_id": "say.1", "turn_id": "t3",
                                        "text": "You pressed", "cut_off": True})
            await worker.send("dtmf", {"digit": "2", "duration_ms": 120})
            self.assertEqual((await worker.next())["say"]["say_id"], "say.2")
            await worker.send("say_refused", {"say_id": "say.2",
                                              "detail": "the caller holds the floor"})
            await worker.send("dtmf", {"digit": "3", "duration_ms": 120})
            self.assertEqual((await worker.next())["say"]["say_id"], "say.3")
            await worker.send("say_started", {"say_id": "say.3", "turn_id": "t4"})
            await worker.send("finalize", {"heard": [{"unit_id": "say.3", "turn_id": "t4",
                                                      "text": "You pressed 3."}]})
            await worker.send("end", {"reason": "hangup"})
            for _ in range(100):
                if len(outcomes) == 3:
                    break
                await asyncio.sleep(0.02)
        self.assertEqual(outcomes, [
            SayOutcome(turn_id="t3", heard="You pressed", cut_off=True),
            SayOutcome(turn_id="", heard="", cut_off=False, refused="the caller holds the floor"),
            SayOutcome(turn_id="t4", heard="You pressed 3.", cut_off=False),
        ])

    async def test_say_refuses_empty_text_before_sending_anything(self):
        errors = []

        def on_session_start(session):
            try:
                session.say("  ")
            except ValueError as err:
                errors.append(str(err))
            return "Hi."

        brain = Brain(on_session_start=on_session_start, on_turn=lambda t, s: None)
        async with call(brain) as worker:
            self.assertEqual((await worker.next())["frame"], "greeting")
        self.assertEqual(errors, ["session.say: text must be a non-empty string"])

    async def test_caller_events_and_turn_metrics_reach_their_handlers_once_asked_for(self):
        seen = []
        metrics = asyncio.get_running_loop().create_future()

        def on_session_start(session):
            session.configure({"events": {"speech": True, "interim_text": True,
                                          "turn_metrics": True}})
            return "Hi."

        brain = Brain(on_session_start=on_session_start, on_turn=lambda t, s: None,
                      on_user_speech=lambda e, s: seen.append(e),
                      on_interim_text=lambda e, s: seen.append(e),
                      on_turn_metrics=lambda m, s: metrics.set_result(m))
        async with call(brain) as worker:
            config = await worker.next()
            self.assertEqual(config["config"]["events"],
                             {"speech": True, "interim_text": True, "turn_metrics": True})
            await worker.send("user_speech", {"speaking": True, "over_bot": True})
            await worker.send("interim_text", {"text": "what time"})
            await worker.send("user_speech", {"speaking": False})
            await worker.send("turn_metrics", {"turn_id": "t1", "trigger": "speech",
                                               "latency_ms": {"end_of_turn": 310, "brain": 120.5},
                                               "interrupted": False})
            got = await asyncio.wait_for(metrics, 5)
        self.assertEqual(got, TurnMetrics("t1", "speech", {"end_of_turn": 310, "brain": 120.5},
                                          False))
        self.assertEqual(seen, [UserSpeech(True, True), InterimText("what time"),
                                UserSpeech(False, False)])


if __name__ == "__main__":
    unittest.main()
