"""A phone call as the Python SDK shows it: ``session.phone``, ``on_dtmf``, ``transfer`` and
``on_transfer_failed``, ``end`` (the service hangs up), over a real socket."""

import asyncio
import logging
import unittest

from voice_brain import Brain, Dtmf, PhoneCall, TransferFailure

from voice_brain.testing import call

logging.getLogger("voice_brain").setLevel(logging.CRITICAL)

PHONE = {"from": "+14155550100", "to": "+918041234567", "carrier": "sip", "call_id": "a84b@pbx"}


class PhoneCallTest(unittest.IsolatedAsyncioTestCase):
    async def test_session_phone_names_caller_dialled_number_and_carrier(self):
        seen = {}
        brain = Brain(on_session_start=lambda s: seen.setdefault("phone", s.phone),
                      on_turn=lambda t, s: None)
        async with call(brain, start=False) as worker:
            await worker.send("session_start", {"session_id": "ses_1", "phone": PHONE})
            await worker.next()
        self.assertEqual(seen["phone"],
                         PhoneCall("+14155550100", "+918041234567", "sip", "a84b@pbx"))

    async def test_an_outbound_call_says_so_and_its_machine_detection_is_unset(self):
        seen = {}
        brain = Brain(on_session_start=lambda s: seen.setdefault("phone", s.phone),
                      on_turn=lambda t, s: None)
        phone = dict(PHONE, direction="outbound", machine_detection="")
        async with call(brain, start=False) as worker:
            await worker.send("session_start", {"session_id": "ses_1", "phone": phone})
            await worker.next()
        self.assertEqual(seen["phone"].direction, "outbound")
        self.assertIsNone(seen["phone"].machine_detection)

    async def test_a_web_call_has_no_phone(self):
        seen = {}
        brain = Brain(on_session_start=lambda s: seen.setdefault("phone", s.phone),
                      on_turn=lambda t, s: None)
        async with call(brain) as worker:
            await worker.next()
        self.assertIsNone(seen["phone"])

    async def test_a_warm_transfer_sends_its_whisper_and_its_failure_has_a_reason(self):
        failed = asyncio.get_running_loop().create_future()
        raised = []

        def on_dtmf(dtmf, session):
            try:
                session.transfer("sip:desk@pbx", whisper="x", ring_timeout_ms=1000)
            except ValueError as err:
                raised.append(str(err))
            session.transfer("sip:desk@pbx", whisper=" Asha, a refund. ", ring_timeout_ms=8000)

        brain = Brain(on_turn=lambda t, s: None, on_dtmf=on_dtmf,
                      on_transfer_failed=lambda f, s: failed.set_result(f))
        async with call(brain, start=False) as worker:
            await worker.send("session_start", {"session_id": "ses_1", "phone": PHONE})
            await worker.next()
            await worker.send("dtmf", {"digit": "0", "duration_ms": 120})
            transfer = await worker.next()
            self.assertEqual(
                transfer["transfer"],
                {"target": "sip:desk@pbx", "whisper": "Asha, a refund.", "ring_timeout_ms": 8000},
            )
            self.assertIn("ring_timeout_ms must be", raised[0])
            await worker.send("transfer_failed",
                              {"target": "sip:desk@pbx", "detail": "486 Busy Here",
                               "reason": "busy"})
            self.assertEqual(await asyncio.wait_for(failed, 5),
                             TransferFailure("sip:desk@pbx", "486 Busy Here", "busy"))

    async def test_keys_reach_on_dtmf_and_transfer_and_end_are_sent(self):
        digits = []
        failed = asyncio.get_running_loop().create_future()

        def on_dtmf(dtmf, session):
            digits.append(dtmf)
            if dtmf.digit == "0":
                session.transfer(" tel:+14155550199 ")
            elif dtmf.digit == "#":
                session.end("caller_pressed_hash")

        brain = Brain(on_turn=lambda t, s: None, on_dtmf=on_dtmf,
                      on_transfer_failed=lambda f, s: failed.set_result(f))
        async with call(brain, start=False) as worker:
            await worker.send("session_start", {"session_id": "ses_1", "phone": PHONE})
            self.assertEqual((await worker.next())["frame"], "greeting")
            await worker.send("dtmf", {"digit": "0", "duration_ms": 120})
            transfer = await worker.next()
            self.assertEqual(transfer["frame"], "transfer")
            self.assertEqual(
                transfer["transfer"],
                {"target": "tel:+14155550199", "whisper": "", "ring_timeout_ms": 0},
            )
            await worker.send("transfer_failed",
                              {"target": "tel:+14155550199", "detail": "REFER answered 403"})
            self.assertEqual(await asyncio.wait_for(failed, 5),
                             TransferFailure("tel:+14155550199", "REFER answered 403"))
            await worker.send("dtmf", {"digit": "#", "duration_ms": 80})
            end = await worker.next()
            self.assertEqual(end["end_session"], {"reason": "caller_pressed_hash"})
        self.assertEqual(digits, [Dtmf("0", 120), Dtmf("#", 80)])

    async def test_transfer_without_a_target_raises_and_sends_nothing(self):
        errors = []

        def on_dtmf(dtmf, session):
            try:
                session.transfer("  ")
            except ValueError as err:
                errors.append(str(err))
            session.dispatch("after")

        brain = Brain(on_turn=lambda t, s: None, on_dtmf=on_dtmf)
        async with call(brain, start=False) as worker:
            await worker.send("session_start", {"session_id": "ses_1", "phone": PHONE})
            await worker.next()
            await worker.send("dtmf", {"digit": "5", "duration_ms": 100})
            self.assertEqual((await worker.next())["frame"], "action")
        self.assertEqual(len(errors), 1)
        self.assertIn("target must be", errors[0])
