// A page message RTVI refuses is recorded in the session log by why, its size and its first 256
// characters (media/call/chat_log.ts), never whole: a 300 KB message sent over a real data channel
// into a call on a real worker (past the 64 KiB RTVI limit, as only a hand-made client can send)
// was one log entry of its full length. Messages RTVI takes are still logged as they came.
import { assert, assertEquals } from "./helpers/assert.ts";
import { startStack } from "../bench/fuzz/stack.ts";
import { REFUSED_EXCERPT_CHARS } from "../media/call/chat_log.ts";

Deno.test("a refused page message is logged by its size and an excerpt, never whole", async () => {
  const stack = await startStack();
  try {
    const { caller, session } = await stack.call(stack.echo);
    // The test caller's werift, like a browser, keeps to the answer's a=max-message-size.
    // deno-lint-ignore no-explicit-any
    (caller.pc as any).sctpTransport.setRemoteMaxMessageSize(0);
    const huge = JSON.stringify({
      label: "rtvi-ai",
      type: "client-message",
      data: { t: "x", d: "y".repeat(300_000) },
    });
    caller.chat.send(huge);
    const error = await caller.waitForMessage((m) => m.type === "error", 15_000);
    assert(/larger than 65536 bytes/.test(JSON.stringify(error.data)));
    const taken = caller.sendRtvi("client-message", { t: "small", d: 1 });
    await caller.waitForMessage((m) => m.id === taken, 5000);
    await caller.hangUp();

    // The worker writes the log in batches; the call's end flushes it.
    const sql = stack.api.db.sql;
    let chats: { data: unknown; size: number }[] = [];
    for (const until = Date.now() + 10_000; Date.now() < until;) {
      chats = await sql`select data, length(data::text) as size from session_events
        where session_id = ${session.session_id} and source = 'page' and kind = 'chat'
        order by id`;
      if (chats.some((c) => typeof c.data === "string" && c.data.includes('"small"'))) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const refused = chats.filter((c) => typeof c.data === "object");
    assertEquals(refused.length, 1, JSON.stringify(chats).slice(0, 2000));
    assertEquals(refused[0].data, {
      refused: "larger than 65536 bytes",
      chars: huge.length,
      excerpt: huge.slice(0, REFUSED_EXCERPT_CHARS),
    });
    assert(chats.every((c) => c.size < 2_000), "no chat entry near the message's size");
    assert(
      chats.some((c) => typeof c.data === "string" && JSON.parse(c.data).data?.t === "small"),
      "a message RTVI took is logged as it came",
    );
  } finally {
    await stack.close();
  }
});
