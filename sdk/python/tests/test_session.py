"""A call's life over a real socket: start, verbs, page messages, heard, end, the server's
routes and the worker's liveness pings."""

import asyncio
import json
import logging
import unittest

import websockets
import websockets.exceptions

from voice_brain import Brain, ConfigError, sockets

from voice_brain.testing import FakeWorker, call, units

logging.getLogger("voice_brain").setLevel(logging.CRITICAL)


class SessionTest(unittest.IsolatedAsyncioTestCase):
    async def test_session_start_gives_id_agent_init_and_config_and_configs_precede_the_greeting(self):
        seen = {}

        def on_session_start(session):
            seen.update(id=session.id, agent=session.agent_id, init=session.init,
                        config=dict(session.config))
            session.configure({"tts": {"voice": "VOICE_ARJUN", "language": "LANGUAGE_HI"}})
            seen["after"] = session.config
            return "Namaste!"

        brain = Brain(on_session_start=on_session_start, on_turn=lambda t, s: None)
        start = {"init": {"customer": 7},
                 "config": {"tts": {"voice": "VOICE_ANANYA", "language": "LANGUAGE_EN"},
                            "idle": {"timeout_ms": 0}}}
        async with call(brain, "ses_42", **start) as worker:
            config, greeting = await worker.take(2)
            self.assertEqual(config["frame"], "config")
            self.assertEqual(config["config"]["tts"],
                             {"voice": "VOICE_ARJUN", "language": "LANGUAGE_HI"})
            self.assertEqual(greeting["greeting"], {"text": "Namaste!"})
            self.assertEqual([config["seq"], greeting["seq"]], ["1", "2"])
        self.assertEqual(seen["id"], "ses_42")
        self.assertEqual(seen["agent"], "ag_1")
        self.assertEqual(seen["init"], {"customer": 7})
        self.assertEqual(seen["config"], {"tts": {"voice": "VOICE_ANANYA",
                                                  "language": "LANGUAGE_EN"},
                                          "idle": {"timeout_ms": 0}})
        self.assertEqual(seen["after"]["tts"], {"voice": "VOICE_ARJUN", "language": "LANGUAGE_HI"})

    async def test_a_failing_session_start_gives_an_empty_greeting(self):
        def on_session_start(session):
            raise RuntimeError("no database")

        brain = Brain(on_session_start=on_session_start, on_turn=lambda t, s: None)
        async with call(brain) as worker:
            self.assertEqual((await worker.next())["greeting"], {"text": ""})

    async def test_a_misspelt_config_raises_and_sends_nothing(self):
        errors = []

        def on_turn(turn, session):
            for bad in ({"tts": {"voice": "VOICE_NOPE"}}, {"tts": {"vioce": "VOICE_ARJUN"}},
                        {"idle": {"timeout_ms": 5}}, "VOICE_ARJUN"):
                try:
                    session.configure(bad)
                except ConfigError as err:
                    errors.append(str(err))
            return "done"

        async with call(Brain(on_turn=on_turn)) as worker:
            await worker.next()
            await worker.send("user_turn", {"turn_id": "t1", "text": "x"})
            frames = await worker.until_last("t1")
            self.assertEqual([f["frame"] for f in frames], ["speech_unit", "speech_unit"])
        self.assertEqual(len(errors), 4, errors)
        self.assertIn("VOICE_ANANYA, VOICE_ARJUN", errors[0])
        self.assertIn("vioce", errors[1])
        self.assertIn("1000 to 3600000", errors[2])

    async def test_dispatch_sends_an_action_and_end_is_sent_once(self):
        def on_turn(turn, session):
            session.dispatch("transcript", {"text": turn.text})
            session.dispatch("nothing")
            for bad in ((float("nan"),), (object(),)):
                try:
                    session.dispatch("bad", *bad)
                except (ValueError, TypeError):
                    pass
            session.dispatch("utf8", "नमस्ते")
            session.end()
            session.end("again")
            return None

        async with call(Brain(on_turn=on_turn)) as worker:
            await worker.next()
            await worker.send("user_turn", {"turn_id": "t1", "text": "bye"})
            frames = await worker.until_last("t1")
            self.assertEqual([f["frame"] for f in frames],
                             ["action", "action", "action", "end_session", "speech_unit"])
            self.assertEqual(frames[0]["action"],
                             {"type": "transcript", "json": '{"text":"bye"}'})
            self.assertEqual(frames[1]["action"], {"type": "nothing", "json": "null"})
            self.assertEqual(frames[2]["action"], {"type": "utf8", "json": '"नमस्ते"'})
            self.assertEqual(frames[3]["end_session"], {"reason": "ended_by_brain"})

    async def test_page_messages_reach_on_rtvi_verbatim(self):
        got = asyncio.Queue()

        async def on_rtvi(message, session):
            await got.put(message)
            session.dispatch("pong", {"got": message["data"]["d"]})

        brain = Brain(on_turn=lambda t, s: None, on_rtvi=on_rtvi)
        ping = {"label": "rtvi-ai", "type": "client-message", "id": "p1",
                "data": {"t": "ping", "d": 7}}
        async with call(brain) as worker:
            await worker.next()
            await worker.send("client_message", {"json": "not json"})  # logged and ignored
            await worker.send("client_message", {"json": json.dumps(ping)})
            self.assertEqual(await asyncio.wait_for(got.get(), 5), ping)
            pong = await worker.next()
            self.assertEqual(pong["action"], {"type": "pong", "json": '{"got":7}'})

    async def test_heard_then_finalize_then_end_reach_the_brain_and_it_closes(self):
        heard, ended = [], asyncio.get_running_loop().create_future()

        def on_session_end(session, end):
            ended.set_result((session.ended, end))

        brain = Brain(on_turn=lambda t, s: None, on_heard=lambda h, s: heard.append(h),
                      on_session_end=on_session_end)
        async with call(brain) as worker:
            await worker.next()
            unit = {"unit_id": "t1.1", "turn_id": "t1", "text": "You said", "cut_off": True}
            await worker.send("heard", unit)
            await worker.send("finalize", {"heard": [
                {"unit_id": "greeting.1", "turn_id": "greeting", "text": "Hello"}, unit]})
            await worker.send("end", {"reason": "hangup"})
            was_ended, end = await asyncio.wait_for(ended, 5)
            await asyncio.wait_for(worker.ws.wait_closed(), 5)  # the brain closes after End
        self.assertTrue(was_ended)
        self.assertEqual([(h.unit_id, h.text, h.cut_off) for h in heard],
                         [("t1.1", "You said", True)])
        self.assertEqual(end.reason, "hangup")
        self.assertEqual([h.text for h in end.heard], ["Hello", "You said"])

    async def test_a_socket_closed_without_end_ends_the_session_disconnected_and_stops_turns(self):
        ended = asyncio.get_running_loop().create_future()
        stopped = asyncio.Event()

        async def on_turn(turn, session):
            try:
                yield "working"
                await asyncio.sleep(30)
            finally:
                stopped.set()

        brain = Brain(on_turn=on_turn, on_session_end=lambda s, e: ended.set_result(e))
        served = await brain.serve(host="127.0.0.1", port=0)
        try:
            worker = await FakeWorker.dial(served.url, "ses_1")
            await worker.start()
            await worker.next()
            await worker.send("user_turn", {"turn_id": "t1", "text": "x"})
            await worker.next()
            await worker.close()
            self.assertEqual((await asyncio.wait_for(ended, 5)).reason, "disconnected")
            await asyncio.wait_for(stopped.wait(), 5)
        finally:
            await served.close()

    async def test_closing_the_server_ends_open_calls(self):
        ended = asyncio.get_running_loop().create_future()
        brain = Brain(on_turn=lambda t, s: None, on_session_end=lambda s, e: ended.set_result(e))
        served = await brain.serve(host="127.0.0.1", port=0)
        worker = await FakeWorker.dial(served.url, "ses_1")
        await worker.start()
        await worker.next()
        await asyncio.wait_for(served.close(), 5)
        self.assertEqual((await asyncio.wait_for(ended, 5)).reason, "disconnected")
        await asyncio.wait_for(worker.ws.wait_closed(), 5)

    async def test_the_route_refuses_another_path_and_a_missing_session_id(self):
        served = await Brain(on_turn=lambda t, s: None).serve(host="127.0.0.1", port=0,
                                                              path="/brain")
        base = f"ws://127.0.0.1:{served.port}"
        try:
            self.assertEqual(served.url, f"{base}/brain")
            for url, status in ((f"{base}/other?session_id=s", 404), (f"{base}/brain", 400)):
                with self.assertRaises(websockets.exceptions.InvalidHandshake) as refused:
                    await sockets.connect(url)
                self.assertEqual(sockets.refused_status(refused.exception), status)
        finally:
            await served.close()

    async def test_the_workers_pings_are_answered_while_a_turn_is_busy(self):
        async def on_turn(turn, session):
            await asyncio.sleep(2)  # awaiting a slow model: the loop is free
            yield "done"

        async with call(Brain(on_turn=on_turn)) as worker:
            await worker.next()
            await worker.send("user_turn", {"turn_id": "t1", "text": "x"})
            for payload in (b"1", b"2"):
                pong = await worker.ws.ping(payload)  # RFC 6455 ping, as the worker sends it
                await asyncio.wait_for(pong, 1)
            self.assertEqual(units(await worker.until_last("t1")), [["done", False], ["", True]])

    async def test_text_messages_undecodable_frames_and_early_frames_are_ignored(self):
        async with call(Brain(on_turn=lambda t, s: f"got {t.text}"), start=False) as worker:
            await worker.send("user_turn", {"turn_id": "early", "text": "before start"})
            await worker.ws.send("a text message")
            await worker.ws.send(b"\xff\xff\xff not protobuf")
            await worker.start()
            self.assertEqual((await worker.next())["frame"], "greeting")
            await worker.send("user_turn", {"turn_id": "t1", "text": "x"})
            frames = await worker.until_last("t1")
            self.assertEqual(units(frames), [["got x", False], ["", True]])

    async def test_accept_runs_a_call_on_your_own_websockets_server(self):
        brain = Brain(on_session_start=lambda s: f"Hello {s.id}", on_turn=lambda t, s: None)
        async with websockets.serve(brain.accept, "127.0.0.1", 0) as server:  # the default API
            port = server.sockets[0].getsockname()[1]
            worker = await FakeWorker.dial(f"ws://127.0.0.1:{port}/anywhere", "ses_own")
            try:
                await worker.start("ses_own")
                self.assertEqual((await worker.next())["greeting"], {"text": "Hello ses_own"})
            finally:
                await worker.close()

    async def test_a_brain_without_on_turn_is_refused(self):
        with self.assertRaises(TypeError):
            await Brain().serve(port=0)
        with self.assertRaises(TypeError):
            Brain(on_trun=lambda t, s: None)


if __name__ == "__main__":
    unittest.main()
