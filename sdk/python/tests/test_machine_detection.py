"""An outbound call's machine detection as the Python SDK shows it: ``machine_detected`` reaches
``on_machine_detected`` and sets ``session.phone.machine_detection``; ``beep`` reaches ``on_beep``.
Over a real socket, the frames encoded from the .proto."""

import asyncio
import logging
import unittest

from voice_brain import Beep, Brain, MachineDetected

from voice_brain.testing import call

logging.getLogger("voice_brain").setLevel(logging.CRITICAL)

PHONE = {"from": "+15550100", "to": "+15550123", "carrier": "sip", "call_id": "out-1@worker",
         "direction": "outbound"}


class MachineDetectionTest(unittest.IsolatedAsyncioTestCase):
    async def test_a_machine_then_its_beep_reach_their_handlers(self):
        seen = []
        beeped = asyncio.get_running_loop().create_future()
        brain = Brain(on_turn=lambda t, s: None,
                      on_session_start=lambda s: "Hi, this is the clinic.",
                      on_machine_detected=lambda d, s: seen.append((d, s.phone.machine_detection)),
                      on_beep=lambda b, s: beeped.set_result(b))
        async with call(brain, start=False) as worker:
            await worker.send("session_start", {"session_id": "ses_1", "phone": PHONE})
            self.assertEqual((await worker.next())["frame"], "greeting")
            await worker.send("machine_detected",
                              {"outcome": "machine", "at_ms": 3300, "why": "long_greeting"})
            await worker.send("beep", {"at_ms": 9120, "heard": True, "hz": 1000})
            self.assertEqual(await asyncio.wait_for(beeped, 5), Beep(9120, True, 1000, ""))
        self.assertEqual(seen, [(MachineDetected("machine", 3300, "long_greeting"), "machine")])

    async def test_a_person_is_human_and_a_beep_not_heard_says_why(self):
        seen = []
        beeped = asyncio.get_running_loop().create_future()
        brain = Brain(on_turn=lambda t, s: None,
                      on_machine_detected=lambda d, s: seen.append((d, s.phone.machine_detection)),
                      on_beep=lambda b, s: beeped.set_result(b))
        async with call(brain, start=False) as worker:
            await worker.send("session_start", {"session_id": "ses_1", "phone": PHONE})
            await worker.next()
            await worker.send("machine_detected",
                              {"outcome": "human", "at_ms": 2100, "why": "short_greeting"})
            # Not what a worker sends after a person; here only to read a Beep not heard.
            await worker.send("beep", {"at_ms": 7000, "heard": False, "why": "silence"})
            self.assertEqual(await asyncio.wait_for(beeped, 5), Beep(7000, False, 0, "silence"))
        self.assertEqual(seen, [(MachineDetected("human", 2100, "short_greeting"), "human")])


if __name__ == "__main__":
    unittest.main()
