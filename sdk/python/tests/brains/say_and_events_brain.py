"""A brain that says things on key presses, collects keys when the page asks, and reports the
caller events it asked for, as actions: the Python half of sdk/python/python_and_typescript_sdks_say_and_report_events_alike
.test.ts (the TypeScript half is in that test)."""

import os

from voice_brain import Brain

brain = Brain()


@brain.on_session_start
def start(session):
    session.configure({"events": {"speech": True, "interim_text": True, "turn_metrics": True}})
    return "Hi."


@brain.on_turn
def answer(turn, session):
    return None


@brain.on_dtmf
async def key(dtmf, session):
    outcome = await session.say(f"You pressed {dtmf.digit}.")
    session.dispatch("said", {"turn_id": outcome.turn_id, "heard": outcome.heard,
                              "cut_off": outcome.cut_off, "refused": outcome.refused or ""})


@brain.on_rtvi
async def page(message, session):
    if (message.get("data") or {}).get("t") != "collect":
        return
    pin = await session.collect_digits(prompt="Your PIN, then hash.", max_digits=6,
                                       terminator="#", sensitive=True)
    # A sensitive collection's digits never leave the brain: only their masked form.
    session.dispatch("collected", {"digits": pin.shown, "reason": pin.reason,
                                   "prompt_refused": pin.prompt_refused or ""})
    menu = await session.collect_digits(max_digits=1)
    session.dispatch("menu", {"digits": menu.digits, "reason": menu.reason})


@brain.on_user_speech
def speech(event, session):
    session.dispatch("speech", {"speaking": event.speaking, "over_bot": event.over_bot})


@brain.on_interim_text
def interim(event, session):
    session.dispatch("interim", {"text": event.text})


@brain.on_turn_metrics
def metrics(m, session):
    session.dispatch("metrics", {"turn_id": m.turn_id, "trigger": m.trigger,
                                 "latency_ms": m.latency_ms, "interrupted": m.interrupted})


@brain.on_machine_detected
def machine(d, session):
    session.dispatch("machine", {"outcome": d.outcome, "at_ms": d.at_ms, "why": d.why})


@brain.on_beep
def beep(b, session):
    session.dispatch("beep", {"at_ms": b.at_ms, "heard": b.heard, "hz": b.hz, "why": b.why})


if __name__ == "__main__":
    brain.run(host=os.environ.get("HOST", "127.0.0.1"),
              port=int(os.environ.get("BRAIN_PORT", "8790")), path="/brain")
