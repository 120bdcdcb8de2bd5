"""Speculative turns over a real socket, as sdk/brain/speculative.test.ts does for the TypeScript
SDK: a turn's speech units go out at once, everything else it sends waits for TurnConfirmed and is
dropped on Cancel; turns that are not speculative are as before."""

import asyncio
import logging
import unittest

from voice_brain import Brain, CollectedDigits, SayOutcome
from voice_brain.testing import call, units

logging.getLogger("voice_brain").setLevel(logging.CRITICAL)


def kind(frame):
    return f"action {frame['action']['type']}" if frame["frame"] == "action" else frame["frame"]


def text(frame):
    return frame["speech_unit"]["text"]


async def answer_plainly(turn):
    """A turn that is not t1 answers plainly, so a test shows nothing of t1 came in between."""
    yield f"answer {turn.id}"


class SpeculativeTurnsTest(unittest.IsolatedAsyncioTestCase):
    async def test_a_confirmed_turn_sends_units_at_once_and_held_sends_on_confirmation_in_order(
            self):
        seen = []

        async def on_turn(turn, session):
            seen.append(turn.speculative)
            session.dispatch("looked_up", {"order": 42})
            session.transfer("tel:+918041234567")
            yield "Placing order 42."
            seen.append(await turn.confirmed())
            session.dispatch("order_placed", {"order": 42})  # after the confirmation: at once
            yield "It is placed."

        async with call(Brain(on_turn=on_turn)) as worker:
            await worker.next()
            await worker.send("user_turn", {"turn_id": "t1", "text": "order 42",
                                            "speculative": True})
            self.assertEqual(text(await worker.next()), "Placing order 42.")
            await worker.send("turn_confirmed", {"turn_id": "t1"})
            rest = await worker.take(5)
            self.assertEqual([kind(f) for f in rest], [
                "action looked_up", "transfer", "action order_placed", "speech_unit",
                "speech_unit"])
            self.assertEqual(rest[1]["transfer"]["target"], "tel:+918041234567")
            self.assertEqual([text(f) for f in rest[3:]], ["It is placed.", ""])
        self.assertEqual(seen, [True, True])

    async def test_a_cancelled_turn_never_sends_its_held_action_or_end_and_is_stopped(self):
        seen = {}
        stopped = asyncio.Event()

        async def on_turn(turn, session):
            if turn.id != "t1":
                async for unit in answer_plainly(turn):
                    yield unit
                return
            try:
                session.dispatch("order_placed", {"order": 42})
                session.end("order placed")
                yield "Placing order 42."
                seen["confirmed"] = await turn.confirmed()
                yield "never sent"
            except asyncio.CancelledError:
                seen["cancelled_error"] = True
                raise
            finally:
                seen["flag"] = turn.cancelled
                stopped.set()

        with self.assertLogs("voice_brain", level="WARNING") as logs:
            async with call(Brain(on_turn=on_turn)) as worker:
                await worker.next()
                await worker.send("user_turn", {"turn_id": "t1", "text": "order 42",
                                                "speculative": True})
                self.assertEqual(text(await worker.next()), "Placing order 42.")
                await worker.send("cancel", {"turn_id": "t1"})
                await asyncio.wait_for(stopped.wait(), 5)
                # The caller went on: their words lead the next turn, whose frames come alone.
                await worker.send("user_turn", {"turn_id": "t2", "text": "order 42 and a cola"})
                self.assertEqual([text(f) for f in await worker.take(2)], ["answer t2", ""])
        self.assertEqual(seen, {"cancelled_error": True, "flag": True})
        dropped = [line for line in logs.output if "dropped" in line]
        self.assertEqual(dropped, [
            "WARNING:voice_brain:dropped action, end_session: speculative turn t1 was cancelled "
            "before it was confirmed session=ses_1 turn=t1"])

    async def test_sends_after_the_cancel_are_dropped_and_sends_from_outside_go_at_once(self):
        dispatched = asyncio.Event()

        async def on_turn(turn, session):
            if turn.id != "t1":
                async for unit in answer_plainly(turn):
                    yield unit
                return
            yield "Let me look."
            # Work that goes on past the Cancel (a task of its own, as a thread would), then a send.
            asyncio.ensure_future(late(turn, session))

        async def late(turn, session):
            await turn.wait_cancelled()
            session.dispatch("late", {})
            dispatched.set()

        brain = Brain(on_turn=on_turn,
                      on_dtmf=lambda d, s: s.dispatch("key", {"digit": d.digit}))
        with self.assertLogs("voice_brain", level="WARNING") as logs:
            async with call(brain) as worker:
                await worker.next()
                await worker.send("user_turn", {"turn_id": "t1", "text": "hmm",
                                                "speculative": True})
                self.assertEqual([text(f) for f in await worker.take(2)], ["Let me look.", ""])
                await worker.send("dtmf", {"digit": "5", "duration_ms": 80})
                self.assertEqual(kind(await worker.next()), "action key")  # not the turn's
                await worker.send("cancel", {"turn_id": "t1"})
                await asyncio.wait_for(dispatched.wait(), 5)
                await worker.send("user_turn", {"turn_id": "t2", "text": "what about tomorrow"})
                self.assertEqual([text(f) for f in await worker.take(2)], ["answer t2", ""])
        self.assertEqual([line for line in logs.output if "dropped" in line], [
            "WARNING:voice_brain:dropped action: speculative turn t1 was cancelled "
            "session=ses_1 turn=t1"])

    async def test_confirmed_used_without_await_raises_instead_of_always_passing(self):
        seen = []

        async def on_turn(turn, session):
            for forgot_the_await in (lambda: turn.confirmed(), lambda: turn.confirmed):
                try:
                    if forgot_the_await():
                        seen.append("passed")
                except TypeError as err:
                    seen.append(str(err))
            seen.append(await turn.confirmed)  # the property is the same awaitable
            yield "ok"

        async with call(Brain(on_turn=on_turn)) as worker:
            await worker.next()
            await worker.send("user_turn", {"turn_id": "t1", "text": "x", "speculative": True})
            await worker.send("turn_confirmed", {"turn_id": "t1"})
            await worker.until_last("t1")
        message = "turn.confirmed() must be awaited: `if await turn.confirmed():`"
        self.assertEqual(seen, [message, message, True])

    async def test_a_turn_that_is_not_speculative_is_confirmed_at_once_and_sends_as_before(self):
        async def on_turn(turn, session):
            session.dispatch("transcript", {"text": turn.text})
            yield f"speculative {turn.speculative}, confirmed {await turn.confirmed()}"

        async with call(Brain(on_turn=on_turn)) as worker:
            await worker.next()
            await worker.send("user_turn", {"turn_id": "t1", "text": "hello"})
            frames = await worker.take(3)
            self.assertEqual([kind(f) for f in frames],
                             ["action transcript", "speech_unit", "speech_unit"])
            self.assertEqual(text(frames[1]), "speculative False, confirmed True")

    async def test_held_configure_applies_on_confirmation_and_say_and_collection_drop_on_cancel(
            self):
        seen = {"outcomes": [], "threw": []}

        async def on_turn(turn, session):
            seen["session"] = session
            session.configure({"tts": {"voice": "VOICE_ARJUN"}})
            try:
                session.collect_digits()  # bad options still raise at once
            except ValueError as err:
                seen["threw"].append(str(err))
            seen["outcomes"].append(asyncio.gather(session.say("One moment."),
                                                   session.collect_digits(max_digits=4)))
            yield f"answer {turn.id}"

        async with call(Brain(on_turn=on_turn)) as worker:
            await worker.next()
            await worker.send("user_turn", {"turn_id": "t1", "text": "a", "speculative": True})
            self.assertEqual(units(await worker.take(2)), [["answer t1", False], ["", True]])
            session = seen["session"]
            self.assertNotIn("tts", session.config)  # not applied before the confirmation
            await worker.send("turn_confirmed", {"turn_id": "t1"})
            config, say = await worker.take(2)
            self.assertEqual(config["config"]["tts"]["voice"], "VOICE_ARJUN")
            self.assertEqual(say["say"]["say_id"], "say.1")
            self.assertEqual(session.config["tts"], {"voice": "VOICE_ARJUN"})
            await worker.send("say_refused", {"say_id": "say.1", "detail": "the bot is speaking"})
            for digit in "7701":
                await worker.send("dtmf", {"digit": digit, "duration_ms": 80})
            said, got = await asyncio.wait_for(seen["outcomes"][0], 5)
            self.assertEqual(said.refused, "the bot is speaking")
            self.assertEqual(got, CollectedDigits("7701", "max_digits"))

            await worker.send("user_turn", {"turn_id": "t2", "text": "b", "speculative": True})
            self.assertEqual(units(await worker.take(2)), [["answer t2", False], ["", True]])
            await worker.send("cancel", {"turn_id": "t2"})
            dropped, none = await asyncio.wait_for(seen["outcomes"][1], 5)
            self.assertEqual(dropped, SayOutcome("", "", False,
                                                 "its speculative turn was cancelled"))
            self.assertEqual(none, CollectedDigits("", "cancelled"))
            await worker.send("user_turn", {"turn_id": "t3", "text": "c"})
            t3 = await worker.take(3)  # t3's own config and say; nothing of t2 before them
            self.assertEqual([kind(f) for f in t3], ["config", "say", "speech_unit"])
            self.assertEqual(t3[1]["say"]["say_id"], "say.2")
        self.assertEqual(len(seen["threw"]), 3)
        self.assertIn("give max_digits, terminator or both", seen["threw"][0])

    async def test_the_calls_end_settles_a_turn_still_waiting_as_not_confirmed(self):
        confirmed = asyncio.get_running_loop().create_future()

        async def wait_for_it(turn):
            confirmed.set_result(await turn.confirmed())

        def on_turn(turn, session):
            asyncio.ensure_future(wait_for_it(turn))
            return "Maybe."

        async with call(Brain(on_turn=on_turn)) as worker:
            await worker.next()
            await worker.send("user_turn", {"turn_id": "t1", "text": "well", "speculative": True})
            await worker.take(2)
            await worker.send("end", {"reason": "hangup"})
            self.assertFalse(await asyncio.wait_for(confirmed, 5))

    def test_a_turns_section_sets_speculative_turns_on_or_off_and_an_absent_one_keeps_them(self):
        from voice_brain.config import apply_config, config_dict, config_message

        on = apply_config({}, config_dict(config_message({"turns": {"speculative": True}})))
        self.assertEqual(on, {"turns": {"speculative": True}})
        kept = apply_config(on, config_dict(config_message({"idle": {"timeout_ms": 0}})))
        self.assertTrue(kept["turns"]["speculative"])
        off = apply_config(kept, config_dict(config_message({"turns": {}})))
        self.assertFalse(off["turns"]["speculative"])


if __name__ == "__main__":
    unittest.main()
