"""A keypad example, in Python: a bank line that takes an account number ending in hash, then a
four-digit PIN as a sensitive collection, and checks them. The same flow as
sdk/brain/example/keypad.ts (TypeScript).

    PYTHONPATH=sdk/python /usr/bin/python3 sdk/python/example/keypad.py

prints ``brain listening on ws://127.0.0.1:8790/brain``; give that URL as the brain_url of an agent
with a phone number, ring it and key in 12345678 # then 4321. BRAIN_PORT (default 8790; 0 picks a
free port) and HOST (default 127.0.0.1) move it.

It prints what step it is on, never a digit: a PIN or account number in a log is a leak.
"""

import asyncio
import hmac
import os
import weakref

from voice_brain import Brain

# Stands in for the bank's own look-up; a real brain asks its back end.
ACCOUNTS = {"12345678": "4321"}
TRIES = 2

_started = weakref.WeakSet()  # sessions whose flow has begun
_flows = set()  # the flows' tasks, held until done

brain = Brain()


@brain.on_session_start
def greet(session):
    return "Welcome to the city bank."


@brain.on_turn
def answer(turn, session):
    return None  # the keys lead this call; what the caller says waits for the prompts


@brain.on_heard
def heard(heard, session):
    # The greeting has played out: the floor is free for the first prompt.
    if heard.turn_id != "greeting" or session in _started:
        return
    _started.add(session)
    task = asyncio.ensure_future(bank(session))
    _flows.add(task)
    task.add_done_callback(_flows.discard)


async def bank(session):
    account = None
    for _ in range(TRIES):
        print("collecting the account number", flush=True)
        got = await session.collect_digits(
            prompt="Please key in your account number, then press hash.",
            max_digits=12, terminator="#", digit_timeout_ms=6000, total_timeout_ms=40_000)
        if got.reason == "ended":
            return
        if got.reason == "terminator" and len(got.digits) >= 6:
            account = got.digits
            break
        await session.say("Sorry, I did not get that.")
    if account is None:
        return await goodbye(session, "Please call again when you have your account number.")

    print("collecting the PIN", flush=True)
    pin = await session.collect_digits(prompt="Now key in your four digit PIN.", max_digits=4,
                                       digit_timeout_ms=6000, sensitive=True)
    if pin.reason == "ended":
        return
    ending = " ".join(account[-4:])
    # compare_digest: the time taken does not tell how much of the PIN was right.
    if pin.reason == "max_digits" and hmac.compare_digest(ACCOUNTS.get(account, ""), pin.digits):
        print("PIN accepted", flush=True)
        await goodbye(session, f"Thank you. Account ending {ending} is verified. Goodbye.")
    else:
        print(f"PIN not accepted ({pin.reason})", flush=True)
        await goodbye(session, f"That PIN does not match account ending {ending}. Goodbye.")


async def goodbye(session, text):
    await session.say(text)
    session.end("keypad_flow_done")


if __name__ == "__main__":
    brain.run(
        host=os.environ.get("HOST", "127.0.0.1"),
        port=int(os.environ.get("BRAIN_PORT", "8790")),
        path="/brain",
    )
