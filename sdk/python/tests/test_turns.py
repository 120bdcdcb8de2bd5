"""Turns over a real socket: units, the last unit, replies of every shape, and cancellation."""

import asyncio
import logging
import threading
import time
import unittest

from voice_brain import Brain

from voice_brain.testing import call, units

logging.getLogger("voice_brain").setLevel(logging.CRITICAL)  # failing handlers are on purpose


class TurnsTest(unittest.IsolatedAsyncioTestCase):
    async def test_each_yield_is_one_unit_sent_at_once_then_an_empty_last_unit(self):
        release = asyncio.Event()

        async def on_turn(turn, session):
            yield f"You said: {turn.text}"
            await release.wait()  # the first unit must already be on the wire
            yield "  "  # blank: skipped
            yield "And more."

        async with call(Brain(on_turn=on_turn)) as worker:
            self.assertEqual((await worker.next())["frame"], "greeting")
            await worker.send("user_turn", {"turn_id": "t1", "text": "hello"})
            first = await worker.next()
            self.assertEqual(first["speech_unit"], {
                "turn_id": "t1", "unit_id": "t1.1", "text": "You said: hello", "last": False,
            })
            release.set()
            rest = await worker.until_last("t1")
            self.assertEqual(units(rest), [["And more.", False], ["", True]])
            self.assertEqual([f["speech_unit"]["unit_id"] for f in rest], ["t1.2", "t1.end"])

    async def test_a_typed_turn_is_marked_typed_and_a_spoken_one_is_not(self):
        seen = []

        def on_turn(turn, session):
            seen.append((turn.id, turn.text, turn.typed))
            return "typed" if turn.typed else "spoken"

        async with call(Brain(on_turn=on_turn)) as worker:
            await worker.next()
            await worker.send("user_turn", {"turn_id": "t1", "text": "hello"})
            spoken = units(await worker.until_last("t1"))
            await worker.send("user_turn", {"turn_id": "t2", "text": "order 42", "typed": True})
            typed = units(await worker.until_last("t2"))
        self.assertEqual(seen, [("t1", "hello", False), ("t2", "order 42", True)])
        self.assertEqual(spoken, [["spoken", False], ["", True]])
        self.assertEqual(typed, [["typed", False], ["", True]])

    async def test_a_string_a_coroutine_a_list_or_none_are_replies_too(self):
        replies = {
            "s": lambda: "plain",
            "c": None,
            "l": lambda: ["one", "two"],
            "n": lambda: None,
        }

        async def coroutine():
            await asyncio.sleep(0)
            return "awaited"

        def on_turn(turn, session):
            return coroutine() if turn.id == "c" else replies[turn.id]()

        async with call(Brain(on_turn=on_turn)) as worker:
            await worker.next()
            got = {}
            for turn_id in ["s", "c", "l", "n"]:
                await worker.send("user_turn", {"turn_id": turn_id, "text": "x"})
                got[turn_id] = units(await worker.until_last(turn_id))
            self.assertEqual(got, {
                "s": [["plain", False], ["", True]],
                "c": [["awaited", False], ["", True]],
                "l": [["one", False], ["two", False], ["", True]],
                "n": [["", True]],
            })

    async def test_turns_wait_for_the_greeting(self):
        greeted = asyncio.Event()

        async def on_session_start(session):
            await greeted.wait()
            return "Hello"

        brain = Brain(on_session_start=on_session_start, on_turn=lambda t, s: "reply")
        async with call(brain) as worker:
            await worker.send("user_turn", {"turn_id": "t1", "text": "early"})
            self.assertTrue(await worker.silent_for(0.2))
            greeted.set()
            frames = await worker.until_last("t1")
            self.assertEqual(frames[0]["greeting"], {"text": "Hello"})
            self.assertEqual(units(frames), [["reply", False], ["", True]])

    async def test_cancel_closes_the_turn_generator_and_sets_cancelled(self):
        seen = {}
        hold = asyncio.Event()

        async def on_turn(turn, session):
            try:
                yield "Once upon a time."
                await hold.wait()  # a model stream the caller interrupts
                yield "never sent"
            except asyncio.CancelledError:
                seen["cancelled_error"] = True
                raise
            finally:
                seen["finally"] = True
                seen["flag"] = turn.cancelled

        async with call(Brain(on_turn=on_turn)) as worker:
            await worker.next()
            await worker.send("user_turn", {"turn_id": "t1", "text": "a story"})
            self.assertEqual(units([await worker.next()]), [["Once upon a time.", False]])
            await worker.send("cancel", {"turn_id": "t1"})
            # Nothing more for the turn: no unit, and no last unit after a Cancel.
            self.assertTrue(await worker.silent_for(0.3))
            self.assertEqual(seen, {"cancelled_error": True, "finally": True, "flag": True})

    async def test_work_handed_to_a_thread_sees_the_cancelled_flag(self):
        stopped = threading.Event()

        def blocking_model(turn):  # a synchronous model call, kept off the event loop
            while not turn.cancelled:
                time.sleep(0.01)
            stopped.set()
            return "too late"

        async def on_turn(turn, session):
            yield "Thinking."
            yield await asyncio.to_thread(blocking_model, turn)

        async with call(Brain(on_turn=on_turn)) as worker:
            await worker.next()
            await worker.send("user_turn", {"turn_id": "t1", "text": "x"})
            await worker.next()
            await worker.send("cancel", {"turn_id": "t1"})
            self.assertTrue(await asyncio.to_thread(stopped.wait, 2.0))
            self.assertTrue(await worker.silent_for(0.2))

    async def test_a_turn_cancelled_while_waiting_for_the_greeting_never_runs(self):
        greeted = asyncio.Event()
        ran = []

        async def on_session_start(session):
            await greeted.wait()
            return "Hello"

        def on_turn(turn, session):
            ran.append(turn.id)
            return "reply"

        async with call(Brain(on_session_start=on_session_start, on_turn=on_turn)) as worker:
            await worker.send("user_turn", {"turn_id": "t1", "text": "early"})
            await asyncio.sleep(0.05)
            await worker.send("cancel", {"turn_id": "t1"})
            await asyncio.sleep(0.05)
            greeted.set()  # the greeting goes on: a cancelled turn does not cancel it
            self.assertEqual((await worker.next())["greeting"], {"text": "Hello"})
            await worker.send("user_turn", {"turn_id": "t2", "text": "later"})
            self.assertEqual(units(await worker.until_last("t2")), [["reply", False], ["", True]])
        self.assertEqual(ran, ["t2"])

    async def test_cancel_of_one_turn_leaves_the_other_running(self):
        hold = asyncio.Event()

        async def on_turn(turn, session):
            yield f"{turn.id} begins"
            await hold.wait()
            yield f"{turn.id} ends"

        async with call(Brain(on_turn=on_turn)) as worker:
            await worker.next()
            await worker.send("user_turn", {"turn_id": "a", "text": "x"})
            await worker.send("user_turn", {"turn_id": "b", "text": "y"})
            await worker.take(2)
            await worker.send("cancel", {"turn_id": "a"})
            await asyncio.sleep(0.1)
            hold.set()
            self.assertEqual(units(await worker.until_last("b")), [["b ends", False], ["", True]])

    async def test_a_failing_turn_handler_still_ends_its_turn_and_the_call_goes_on(self):
        async def on_turn(turn, session):
            if turn.text == "boom":
                yield "before the failure"
                raise RuntimeError("model down")
            yield "fine"

        async with call(Brain(on_turn=on_turn)) as worker:
            await worker.next()
            await worker.send("user_turn", {"turn_id": "t1", "text": "boom"})
            self.assertEqual(units(await worker.until_last("t1")),
                             [["before the failure", False], ["", True]])
            await worker.send("user_turn", {"turn_id": "t2", "text": "again"})
            self.assertEqual(units(await worker.until_last("t2")), [["fine", False], ["", True]])

    async def test_a_handler_yielding_a_non_string_ends_the_turn_without_it(self):
        async def on_turn(turn, session):
            yield 42

        async with call(Brain(on_turn=on_turn)) as worker:
            await worker.next()
            await worker.send("user_turn", {"turn_id": "t1", "text": "x"})
            self.assertEqual(units(await worker.until_last("t1")), [["", True]])

    async def test_user_idle_is_answered_on_its_turn_id(self):
        async def on_user_idle(idle, session):
            yield f"Still there after {idle.idle_ms} ms?"

        brain = Brain(on_turn=lambda t, s: None, on_user_idle=on_user_idle)
        async with call(brain) as worker:
            await worker.next()
            await worker.send("user_idle", {"idle_ms": 5000, "turn_id": "idle1"})
            frames = await worker.until_last("idle1")
            self.assertEqual(units(frames), [["Still there after 5000 ms?", False], ["", True]])

    async def test_user_idle_without_a_handler_lets_the_floor_pass(self):
        async with call(Brain(on_turn=lambda t, s: "x")) as worker:
            await worker.next()
            await worker.send("user_idle", {"idle_ms": 5000, "turn_id": "idle1"})
            self.assertEqual(units(await worker.until_last("idle1")), [["", True]])


if __name__ == "__main__":
    unittest.main()
