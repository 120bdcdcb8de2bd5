"""The example brain over a real socket: what a new user sees when they point an agent at it."""

import importlib.util
import json
import pathlib
import unittest

from voice_brain.testing import call, units

EXAMPLE = pathlib.Path(__file__).resolve().parent.parent / "example" / "brain.py"


def example_module():
    spec = importlib.util.spec_from_file_location("example_brain", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not __main__: builds the brain without serving it
    return module


def example_brain():
    return example_module().brain


def kinds(frames):
    return [f["action"]["type"] if f["frame"] == "action" else f["frame"] for f in frames]


class ExampleBrainTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.brain = example_brain()

    async def test_it_greets_then_answers_with_what_it_heard_and_a_transcript_action(self):
        async with call(self.brain) as worker:
            self.assertIn("Python example brain", (await worker.next())["greeting"]["text"])
            await worker.send("user_turn", {"turn_id": "t1", "text": "the weather is nice"})
            frames = await worker.until_last("t1")
            self.assertEqual(frames[0]["action"], {
                "type": "transcript",
                "json": '{"turn_id":"t1","text":"the weather is nice","typed":false}',
            })
            self.assertEqual(units(frames), [["You said: the weather is nice", False], ["", True]])

    async def test_asking_for_a_story_gets_a_long_reply_to_interrupt(self):
        async with call(self.brain) as worker:
            await worker.next()
            await worker.send("user_turn", {"turn_id": "t1", "text": "tell me a story"})
            spoken = [u for u in units(await worker.until_last("t1")) if not u[1]]
            self.assertEqual(spoken[0][0], "You said: tell me a story")
            self.assertGreaterEqual(len(spoken), 5)

    async def test_goodbye_says_goodbye_and_asks_to_end_the_session(self):
        async with call(self.brain) as worker:
            await worker.next()
            await worker.send("user_turn", {"turn_id": "t1", "text": "OK, bye"})
            frames = await worker.until_last("t1")
            self.assertIn("Goodbye", units(frames)[0][0])
            self.assertEqual([f["end_session"] for f in frames if f["frame"] == "end_session"],
                             [{"reason": "caller said goodbye"}])

    async def test_a_page_ping_gets_a_pong_and_silence_gets_a_nudge(self):
        async with call(self.brain) as worker:
            await worker.next()
            ping = {"label": "rtvi-ai", "type": "client-message", "id": "p1",
                    "data": {"t": "ping", "d": 7}}
            await worker.send("client_message", {"json": json.dumps(ping)})
            pong = await worker.next()
            self.assertEqual(pong["action"]["type"], "pong")
            self.assertEqual(json.loads(pong["action"]["json"])["got"], 7)
            await worker.send("user_idle", {"idle_ms": 5000, "turn_id": "idle1"})
            self.assertEqual(units(await worker.until_last("idle1")),
                             [["Are you still there?", False], ["", True]])

    async def test_an_order_is_placed_and_recorded_at_once_when_speculative_turns_are_off(self):
        example = example_module()
        async with call(example.brain) as worker:
            self.assertEqual((await worker.next())["frame"], "greeting")  # no Config: off
            await worker.send("user_turn", {"turn_id": "t1", "text": "order 7 please"})
            frames = await worker.until_last("t1")
            self.assertEqual(kinds(frames), ["transcript", "speech_unit", "order_placed",
                                             "speech_unit", "speech_unit"])
            self.assertEqual(units(frames), [["Placing order 7.", False],
                                             ["Order 7 is placed.", False], ["", True]])
        self.assertEqual(example.ORDERS, ["7"])

    async def test_with_speculative_turns_on_an_order_is_recorded_only_once_confirmed(self):
        example = example_module()
        async with call(example.brain, init={"speculative_turns": True}) as worker:
            config, greeting = await worker.take(2)
            self.assertEqual(config["config"]["turns"], {"speculative": True})
            self.assertEqual(greeting["frame"], "greeting")
            await worker.send("user_turn", {"turn_id": "t1", "text": "order 42",
                                            "speculative": True})
            self.assertEqual(units([await worker.next()]), [["Placing order 42.", False]])
            await worker.send("cancel", {"turn_id": "t1"})  # the caller went on
            await worker.send("user_turn", {"turn_id": "t2", "text": "order 42 and a cola",
                                            "speculative": True})
            self.assertEqual(units([await worker.next()]), [["Placing order 42.", False]])
            self.assertEqual(example.ORDERS, [])  # nothing recorded before the confirmation
            await worker.send("turn_confirmed", {"turn_id": "t2"})
            frames = await worker.take(4)
            self.assertEqual(kinds(frames),
                             ["transcript", "order_placed", "speech_unit", "speech_unit"])
            self.assertEqual(json.loads(frames[0]["action"]["json"])["turn_id"], "t2")
        self.assertEqual(example.ORDERS, ["42"])  # the cancelled turn recorded nothing


if __name__ == "__main__":
    unittest.main()
