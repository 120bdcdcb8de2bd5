"""session.collect_digits over a real socket, as sdk/brain/keypad.test.ts does for the TypeScript
SDK: each way a collection stops, type-ahead over its prompt, the sensitive flag sent and put
back, one at a time."""

import asyncio
import contextlib
import logging
import unittest

from voice_brain import Brain, CollectedDigits
from voice_brain.testing import call

logging.getLogger("voice_brain").setLevel(logging.CRITICAL)


async def settled(future, seconds):
    """Whether ``future`` has settled within ``seconds`` (it is left running)."""
    try:
        await asyncio.wait_for(asyncio.shield(future), seconds)
        return True
    except asyncio.TimeoutError:
        return False


class KeypadTest(unittest.IsolatedAsyncioTestCase):
    @contextlib.asynccontextmanager
    async def rig(self):
        seen = {"dtmf": []}
        brain = Brain(on_session_start=lambda s: seen.setdefault("session", s),
                      on_turn=lambda t, s: None,
                      on_dtmf=lambda d, s: seen["dtmf"].append(d.digit))
        async with call(brain) as worker:
            self.assertEqual((await worker.next())["frame"], "greeting")

            async def press(*digits):
                for digit in digits:
                    await worker.send("dtmf", {"digit": digit, "duration_ms": 100})

            yield worker, seen["session"], seen["dtmf"], press

    async def test_a_terminator_ends_it_and_is_not_a_digit_and_its_keys_skip_on_dtmf(self):
        async with self.rig() as (_, session, dtmf, press):
            got = session.collect_digits(max_digits=10, terminator="#")
            await press("1", "2", "*", "3", "#")
            self.assertEqual(await got, CollectedDigits("12*3", "terminator"))
            await press("9")
            await asyncio.sleep(0.1)
            self.assertEqual(dtmf, ["9"])

    async def test_max_digits_ends_it_at_the_last_digit(self):
        async with self.rig() as (_, session, dtmf, press):
            got = session.collect_digits(max_digits=3)
            await press("4", "5", "6", "7")
            self.assertEqual(await got, CollectedDigits("456", "max_digits"))
            await asyncio.sleep(0.1)
            self.assertEqual(dtmf, ["7"])

    async def test_the_digit_timeout_runs_from_the_start_then_from_each_key(self):
        async with self.rig() as (_, session, _dtmf, press):
            none = await session.collect_digits(terminator="#", digit_timeout_ms=150)
            self.assertEqual(none, CollectedDigits("", "digit_timeout"))
            got = session.collect_digits(terminator="#", digit_timeout_ms=300)
            for digit in "123":
                await asyncio.sleep(0.15)  # each key well inside the timeout from the one before
                await press(digit)
            self.assertFalse(await settled(got, 0.1), "stopped before the timeout after a key")
            self.assertEqual(await got, CollectedDigits("123", "digit_timeout"))

    async def test_the_total_timeout_stops_a_caller_who_keeps_pressing(self):
        async with self.rig() as (_, session, _dtmf, press):
            got = session.collect_digits(terminator="#", digit_timeout_ms=300,
                                         total_timeout_ms=600)
            pressed = 0
            while not await settled(got, 0.1):
                await press("5")
                pressed += 1
            result = await got
            self.assertEqual(result.reason, "total_timeout")
            self.assertGreaterEqual(pressed, 4)
            self.assertGreaterEqual(len(result.digits), 4)

    async def test_the_call_ending_stops_it_with_the_keys_it_had(self):
        async with self.rig() as (worker, session, _dtmf, press):
            got = session.collect_digits(max_digits=6)
            await press("1", "2")
            await asyncio.sleep(0.1)
            await worker.send("end", {"reason": "hangup"})
            self.assertEqual(await got, CollectedDigits("12", "ended"))
            self.assertEqual(await session.collect_digits(max_digits=1),
                             CollectedDigits("", "ended"))

    async def test_keys_during_the_prompt_count_and_the_clocks_start_once_it_is_heard(self):
        async with self.rig() as (worker, session, _dtmf, press):
            got = session.collect_digits(prompt="Key in your account number, then hash.",
                                         terminator="#", digit_timeout_ms=200)
            self.assertEqual((await worker.next())["say"],
                             {"say_id": "say.1", "text": "Key in your account number, then hash."})
            await worker.send("say_started", {"say_id": "say.1", "turn_id": "t1"})
            await press("7", "8")
            self.assertFalse(await settled(got, 0.5), "a clock ran while the prompt played")
            await worker.send("heard", {"unit_id": "say.1", "turn_id": "t1",
                                        "text": "Key in your", "cut_off": True})
            self.assertEqual(await got, CollectedDigits("78", "digit_timeout"))

    async def test_typed_ahead_keys_that_fill_it_end_it_and_it_resolves_after_the_prompt(self):
        async with self.rig() as (worker, session, dtmf, press):
            got = session.collect_digits(prompt="Press 1 for sales.", max_digits=1)
            await worker.next()
            await worker.send("say_started", {"say_id": "say.1", "turn_id": "t1"})
            await press("1", "2")
            await asyncio.sleep(0.1)
            self.assertEqual(dtmf, ["2"])  # the collection had stopped at "1"
            self.assertFalse(await settled(got, 0.2), "resolved while its prompt still played")
            await worker.send("heard", {"unit_id": "say.1", "turn_id": "t1",
                                        "text": "Press 1 for sales.", "cut_off": False})
            self.assertEqual(await got, CollectedDigits("1", "max_digits"))

    async def test_a_refused_prompt_starts_the_clocks_at_once_and_says_why(self):
        async with self.rig() as (worker, session, _dtmf, _press):
            got = session.collect_digits(prompt="Your PIN?", max_digits=4, digit_timeout_ms=150)
            await worker.next()
            await worker.send("say_refused", {"say_id": "say.1",
                                              "detail": "the caller holds the floor"})
            result = await got
            self.assertEqual(result.reason, "digit_timeout")
            self.assertEqual(result.prompt_refused, "the caller holds the floor")

    async def test_sensitive_sets_the_flag_before_the_prompt_clears_it_after_and_masks(self):
        async with self.rig() as (worker, session, _dtmf, press):
            got = session.collect_digits(prompt="Your PIN?", max_digits=4, sensitive=True)
            on, say = await worker.take(2)
            self.assertEqual(on["config"]["keypad"], {"sensitive": True})
            self.assertEqual(say["frame"], "say")
            self.assertEqual(session.config["keypad"], {"sensitive": True})
            await worker.send("say_started", {"say_id": "say.1", "turn_id": "t1"})
            await worker.send("heard", {"unit_id": "say.1", "turn_id": "t1", "text": "Your PIN?",
                                        "cut_off": False})
            await press("4", "3", "2", "1")
            result = await got
            off = await worker.next()
            self.assertEqual(off["config"]["keypad"], {"sensitive": False})
            self.assertEqual(session.config["keypad"], {"sensitive": False})
            self.assertEqual(result.digits, "4321")
            self.assertTrue(result.sensitive)
            for text in (repr(result), str(result), f"{result}", repr([result]),
                         repr({"r": result})):
                self.assertNotRegex(text.replace("*", ""), "[1-4]", text)
                self.assertIn("****", text)
            with self.assertLogs("voice_brain", logging.CRITICAL) as logs:
                logging.getLogger("voice_brain").critical("got %s %r", result, result)
            self.assertNotRegex("".join(logs.output).replace("*", ""), "[1-4]")
            menu = session.collect_digits(max_digits=1)
            await press("2")
            self.assertEqual(repr(await menu), "CollectedDigits(digits='2', reason='max_digits')")

    async def test_a_sensitive_collection_leaves_a_flag_the_brain_set_itself(self):
        async with self.rig() as (worker, session, _dtmf, press):
            session.configure({"keypad": {"sensitive": True}})
            await worker.next()
            got = session.collect_digits(max_digits=1, sensitive=True)
            await press("9")
            await got
            session.dispatch("after")
            self.assertEqual((await worker.next())["frame"], "action")  # no Config in between
            self.assertEqual(session.config["keypad"], {"sensitive": True})

    async def test_one_at_a_time_and_bad_options_are_refused_sending_nothing(self):
        async with self.rig() as (worker, session, _dtmf, press):
            first = session.collect_digits(max_digits=2, sensitive=True)
            self.assertEqual((await worker.next())["frame"], "config")
            with self.assertRaisesRegex(RuntimeError, "a collection is already running"):
                session.collect_digits(max_digits=1, prompt="Again?")
            await press("1", "2")
            self.assertEqual(await first, CollectedDigits("12", "max_digits", True))
            self.assertEqual((await worker.next())["frame"], "config")  # cleared; no Say sent
            bad = [
                ({}, "give max_digits, terminator or both"),
                ({"max_digits": 0}, "max_digits must be an integer of 1 to 64"),
                ({"max_digits": True}, "max_digits"),
                ({"terminator": "##"}, "terminator must be one key"),
                ({"terminator": "x"}, "terminator must be one key"),
                ({"max_digits": 4, "digit_timeout_ms": 0}, "digit_timeout_ms must be an integer"),
                ({"max_digits": 4, "total_timeout_ms": 10_000_000}, "total_timeout_ms"),
                ({"max_digits": 4, "prompt": " "}, "prompt must be a non-empty string"),
                ({"max_digits": 4, "sensitive": "yes"}, "sensitive must be a bool"),
            ]
            for options, why in bad:
                with self.assertRaisesRegex(ValueError, why):
                    session.collect_digits(**options)
            with self.assertRaises(TypeError):
                session.collect_digits(max_digits=4, maxDigits=4)
            session.dispatch("after")
            self.assertEqual((await worker.next())["frame"], "action")  # the refusals sent nothing
            again = session.collect_digits(max_digits=1)
            await press("3")
            self.assertEqual((await again).digits, "3")


if __name__ == "__main__":
    unittest.main()
