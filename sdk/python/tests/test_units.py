"""Speech units from a token stream: the cases shared with the TypeScript SDK
(``sdk/speech_units_cases.json``), each fed as given, one code point at a time and whole, plus the
Python-only parts (async and plain iterables, closing the stream, refusals)."""

import asyncio
import json
import pathlib
import unittest

from voice_brain import Brain, UnitSplitter, speech_units
from voice_brain.testing import call, units

CASES = json.loads(
    (pathlib.Path(__file__).resolve().parents[2] / "speech_units_cases.json").read_text("utf-8")
)


def split(tokens, **options):
    splitter = UnitSplitter(**options)
    units = []
    for token in tokens:
        units += splitter.push(token)
    return units + splitter.end()


class SharedCasesTest(unittest.TestCase):
    def test_every_shared_case_however_the_text_is_chunked(self):
        self.assertGreater(len(CASES), 20)
        for case in CASES:
            options = case.get("options", {})
            whole = "".join(case["tokens"])
            for how, tokens in (("as streamed", case["tokens"]), ("code point by code point",
                                                                  list(whole)),
                                ("whole", [whole])):
                with self.subTest(case=case["name"], fed=how):
                    self.assertEqual(split(tokens, **options), case["units"])


class SpeechUnitsTest(unittest.IsolatedAsyncioTestCase):
    async def test_a_unit_is_yielded_as_soon_as_the_token_ending_it_arrives(self):
        sent = asyncio.Queue()

        async def llm():
            while True:
                token = await sent.get()
                if token is None:
                    return
                yield token

        units = speech_units(llm())
        await sent.put("Hello there. ")
        self.assertEqual(await asyncio.wait_for(units.__anext__(), 2), "Hello there.")
        await sent.put("Bye")
        await sent.put(None)
        self.assertEqual([u async for u in units], ["Bye"])

    async def test_a_plain_iterable_of_tokens_works_too(self):
        units = [u async for u in speech_units(iter(["One. ", "Two."]), min_chars=0)]
        self.assertEqual(units, ["One.", "Two."])

    async def test_closing_the_units_early_closes_the_token_stream(self):
        closed = asyncio.Event()

        async def llm():
            try:
                yield "First sentence. Second"
                await asyncio.sleep(10)
                yield " sentence."
            finally:
                closed.set()

        units = speech_units(llm())
        self.assertEqual(await units.__anext__(), "First sentence.")
        await units.aclose()  # what the SDK does to the turn handler on Cancel
        self.assertTrue(closed.is_set())


class InATurnTest(unittest.IsolatedAsyncioTestCase):
    async def test_a_brain_streaming_a_model_speaks_unit_by_unit_and_cancel_closes_the_model(self):
        closed = asyncio.Event()

        async def model():
            try:
                for token in ("Sure, let me look ", "that up for you", ". It is 3",
                              ".14 metres long, end to end. "):
                    yield token
                await asyncio.sleep(30)  # still thinking when the caller talks over the bot
                yield "Never spoken."
            finally:
                closed.set()

        async def on_turn(turn, session):
            async for unit in speech_units(model()):
                yield unit

        async with call(Brain(on_turn=on_turn)) as worker:
            await worker.next()  # the greeting
            await worker.send("user_turn", {"turn_id": "t1", "text": "how long is it"})
            self.assertEqual(units(await worker.take(2)), [
                ["Sure, let me look that up for you.", False],
                ["It is 3.14 metres long, end to end.", False],
            ])
            await worker.send("cancel", {"turn_id": "t1"})
            await asyncio.wait_for(closed.wait(), 5)
            await worker.send("user_turn", {"turn_id": "t2", "text": "ok"})
            self.assertEqual((await worker.next())["speech_unit"]["turn_id"], "t2")


class RefusalsTest(unittest.TestCase):
    def test_bad_options_and_tokens_are_refused_clearly(self):
        with self.assertRaisesRegex(ValueError, "max_chars must be >= 1"):
            UnitSplitter(max_chars=0)
        with self.assertRaisesRegex(ValueError, "min_chars must be a whole number"):
            UnitSplitter(min_chars=-1)
        with self.assertRaisesRegex(ValueError, "at least first_min_chars"):
            UnitSplitter(first_min_chars=50, max_chars=40)
        splitter = UnitSplitter()
        with self.assertRaisesRegex(TypeError, "expected a str, got a int"):
            splitter.push(3)
        self.assertEqual(splitter.push("Still fine. "), ["Still fine."])


if __name__ == "__main__":
    unittest.main()
