"""The keypad example (example/keypad.py) over a real socket, as sdk/brain/example/keypad.test.ts
does for the TypeScript one: an account number ending in #, then a sensitive PIN."""

import contextlib
import importlib.util
import io
import pathlib
import unittest

from voice_brain.testing import call

EXAMPLE = pathlib.Path(__file__).resolve().parent.parent / "example" / "keypad.py"


def keypad_brain():
    spec = importlib.util.spec_from_file_location("keypad_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not __main__: builds the brain without serving it
    return module.brain


class KeypadExampleTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.turn = 0

    async def say_with(self, worker, keys=""):
        """The next frame is a Say: it starts, ``keys`` are pressed over it, it is heard whole."""
        say = (await worker.next())["say"]
        self.turn += 1
        turn_id = f"s{self.turn}"
        await worker.send("say_started", {"say_id": say["say_id"], "turn_id": turn_id})
        for digit in keys:
            await worker.send("dtmf", {"digit": digit, "duration_ms": 100})
        await worker.send("heard", {"unit_id": say["say_id"], "turn_id": turn_id,
                                    "text": say["text"], "cut_off": False})
        return say["text"]

    async def flow(self, pin):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            async with call(keypad_brain()) as worker:
                greeting = await worker.next()
                self.assertEqual(greeting["greeting"]["text"], "Welcome to the city bank.")
                await worker.send("heard", {"unit_id": "greeting.1", "turn_id": "greeting",
                                            "text": "Welcome", "cut_off": False})
                self.assertIn("then press hash", await self.say_with(worker, "12345678#"))
                self.assertEqual((await worker.next())["config"]["keypad"], {"sensitive": True})
                self.assertIn("four digit PIN", await self.say_with(worker, pin))
                self.assertEqual((await worker.next())["config"]["keypad"], {"sensitive": False})
                last = await self.say_with(worker)
                self.assertEqual((await worker.next())["end_session"],
                                 {"reason": "keypad_flow_done"})
        return last, printed.getvalue()

    async def test_it_verifies_an_account_number_and_its_pin_and_hangs_up(self):
        last, printed = await self.flow("4321")
        self.assertEqual(last, "Thank you. Account ending 5 6 7 8 is verified. Goodbye.")
        self.assertEqual(printed.splitlines(), ["collecting the account number",
                                                "collecting the PIN", "PIN accepted"])

    async def test_it_refuses_a_wrong_pin_without_saying_or_printing_it(self):
        last, printed = await self.flow("9999")
        self.assertEqual(last, "That PIN does not match account ending 5 6 7 8. Goodbye.")
        self.assertNotIn("9999", printed)
        self.assertEqual(printed.splitlines()[-1], "PIN not accepted (max_digits)")


if __name__ == "__main__":
    unittest.main()
