"""The example brain, in Python: repeats what the caller said, tells a long story to interrupt,
places an order ("order 42"), ends on "bye". A session whose init has ``"speculative_turns": true``
gets speculative turns (docs/brain-guide.md, "Speculative turns"). The same behaviour as
sdk/brain/example/ (TypeScript).

    PYTHONPATH=sdk/python /usr/bin/python3 sdk/python/example/brain.py

prints ``brain listening on ws://127.0.0.1:8790/brain``; give that URL as the agent's brain_url.
BRAIN_PORT (default 8790; 0 picks a free port) and HOST (default 127.0.0.1) move it.
"""

import os
import re
import time

from voice_brain import Brain

STORY = [
    "Once upon a time, a small robot lived in a lighthouse by the sea.",
    "Every night it counted the ships that passed and wished one of them would stop.",
    "One stormy evening a fishing boat lost its way, and the robot turned its lamp toward it.",
    "The fishermen followed the light home and came back the next day to say thank you.",
    "From then on the robot was never lonely again, and that is the end of the story.",
]

ORDERS = []
"""The orders placed: the example's stand-in for a database."""

brain = Brain()


@brain.on_session_start
def greet(session):
    # Replies sooner: each reply is made while the worker waits to see if the caller goes on.
    if session.init.get("speculative_turns") is True:
        session.configure({"turns": {"speculative": True}})
    return "Hello! I am the Python example brain. Say something and I will repeat it."


@brain.on_turn
async def answer(turn, session):
    # Shows on the page; "typed": the caller typed it (the page's text box) rather than spoke it.
    # On a speculative turn the SDK holds it until the turn is confirmed, and drops it if not.
    session.dispatch("transcript", {"turn_id": turn.id, "text": turn.text, "typed": turn.typed})
    words = turn.text.lower()
    if re.search(r"\b(good)?bye\b", words):
        yield "Goodbye! Thanks for calling."
        session.end("caller said goodbye")
        return
    order = re.search(r"\border (\d+)\b", words)
    if order:
        yield f"Placing order {order[1]}."  # spoken only if the caller's turn is taken
        # The SDK cannot hold a write to a database: wait until the caller's turn is taken (on a
        # speculative turn the caller may go on, and then this turn is cancelled).
        if not await turn.confirmed():
            return
        ORDERS.append(order[1])
        session.dispatch("order_placed", {"order": order[1]})
        yield f"Order {order[1]} is placed."
        return
    yield f"You said: {turn.text}"
    if re.search(r"\b(story|stories|long)\b", words):
        for sentence in STORY:
            # On barge-in the SDK closes this generator; the flag is for code between awaits.
            if turn.cancelled:
                return
            yield sentence


@brain.on_rtvi
def page_message(message, session):
    # Page messages arrive verbatim; the client's sendClientMessage("ping", d) sends
    # {"type": "client-message", "data": {"t": "ping", "d": d}}.
    data = message.get("data") if isinstance(message.get("data"), dict) else {}
    kind = data.get("t") if message.get("type") == "client-message" else message.get("type")
    if kind == "ping":
        session.dispatch("pong", {"at": int(time.time() * 1000), "got": data.get("d")})


@brain.on_user_idle
def nudge(idle, session):
    return "Are you still there?"


@brain.on_session_end
def ended(session, end):
    print(f"session {session.id} ended ({end.reason}); caller heard {len(end.heard)} units",
          flush=True)


if __name__ == "__main__":
    brain.run(
        host=os.environ.get("HOST", "127.0.0.1"),
        port=int(os.environ.get("BRAIN_PORT", "8790")),
        path="/brain",
    )
