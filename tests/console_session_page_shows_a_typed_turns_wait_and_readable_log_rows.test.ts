// A real call with a typed turn, then its console page: the typed turn shows its wait (its text
// reaching the worker to the first bot audio sent, which the worker records), the turns' "At" and
// the log count from the same origin and say so, chat frames read as messages rather than strings
// of escaped JSON, and no log row's summary is empty (the brain's closing unit has no text).
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { startInProcessCallService, waitForLog } from "./helpers/call_harness.ts";
import { signIn } from "./helpers/console_client.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";

const TYPED = "what are your opening hours";

const decode = (s: string) =>
  s.replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">").replaceAll("&amp;", "&");

Deno.test("console: a typed turn's wait, one time origin, and readable log rows", async () => {
  const service = await startInProcessCallService(createExampleBrain());
  try {
    const { caller, sessionId } = await service.call();
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
    caller.sendRtvi("send-text", { content: TYPED, options: {} });
    await waitForLog(
      service,
      sessionId,
      (e) => e.source === "to_brain" && e.kind === "heard" && e.data.text === `You said: ${TYPED}`,
      20_000,
    );
    await caller.hangUp();
    const record = await service.record(sessionId, "ended");

    // The record: the typed turn begins when its text arrived and has its wait.
    const typed = record.timings.turns.find((t: { trigger: string }) => t.trigger === "typed");
    assert(typed, "no typed turn in the record");
    assertEquals(typed.marks.typed_text, 0);
    const wait = typed.latency_ms.typed_to_first_audio;
    assert(typeof wait === "number" && wait > 0, JSON.stringify(typed));
    assertEquals(wait, typed.marks.first_audio - typed.marks.typed_text);

    const op = await signIn(service.api);
    const { status, html } = await op.get(`/console/sessions/${sessionId}`);
    assertEquals(status, 200);

    // The typed turn's row shows its wait, marked as from the typed text.
    const row = new RegExp(`<tr data-turn="${typed.turn_id}">[\\s\\S]*?</tr>`).exec(html)?.[0];
    assert(row, "no row for the typed turn");
    assertMatch(
      row,
      new RegExp(
        `data-latency="typed_to_first_audio"[^>]*>${Math.round(wait)} ms <span[^>]*>` +
          "from typed text<",
      ),
    );

    // One origin, labelled: the turn's "At" is its start counted from the session's creation,
    // as the log's times are.
    assertMatch(
      html,
      /<th title="seconds since the session was created[^"]*">At \(s since created\)/,
    );
    assertMatch(
      html,
      /<th class="num" title="seconds since the session was created[^"]*">s since created/,
    );
    const created = new Date(record.timings.created_at).getTime();
    const at = /<td class="small at">\+([\d.]+)<\/td>/.exec(row)?.[1];
    assertEquals(at, ((new Date(typed.started_at).getTime() - created) / 1000).toFixed(1));
    const typedText = record.log.find((e: { kind: string }) => e.kind === "typed_text");
    const logAt = new RegExp(
      `<td class="num small" title="${new Date(typedText.at).toISOString()}">\\+([\\d.]+)<`,
    ).exec(html)?.[1];
    assert(logAt, "the typed_text row's time is not on the page");
    assert(Math.abs(Number(logAt) - Number(at)) < 0.15, `At ${at} s, log ${logAt} s`);

    // Every log row's summary says something, and none is JSON text escaped again.
    const summaries = [...html.matchAll(/<summary class="mono small">([^<]*)<\/summary>/g)]
      .map((m) => decode(m[1]));
    assertEquals(summaries.length, record.log.length);
    assertEquals(summaries.filter((s) => s.trim() === ""), [], "empty log rows");
    assertEquals(summaries.filter((s) => s.includes('\\"')), [], "double-escaped rows");
    assert(summaries.includes(`send-text: content=${TYPED} options={}`), summaries.join("\n"));
    const closing = record.log.filter((e: { kind: string; data: { text?: string } }) =>
      e.kind === "speech_unit" && e.data.text === ""
    );
    assert(closing.length > 0, "the example brain's closing units have no text");
    assert(summaries.some((s) => s.startsWith("(no text) ")), summaries.join("\n"));
    // A chat frame's details show the frame parsed, not as one escaped string.
    const pres = [...html.matchAll(/<pre>([^<]*)<\/pre>/g)].map((m) => decode(m[1]));
    assert(pres.some((p) => p.includes(`"content": "${TYPED}"`)), "the send-text frame, parsed");
    assertEquals(pres.filter((p) => p.includes('\\"')), [], "details escaped twice");
  } finally {
    await service.close();
  }
});
