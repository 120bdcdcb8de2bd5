// session.end(reason): the record keeps the service's status and end reason (ended, brain_ended)
// and, beside them, the brain's own reason text, cut to 200 characters; the console's session
// header shows it. Before, the brain's words reached only the wire log.
import { assert, assertEquals } from "./helpers/assert.ts";
import { startCallService } from "./helpers/call_harness.ts";
import { signIn } from "./helpers/console_client.ts";
import { createBrain } from "../sdk/brain/mod.ts";

// 230 characters, with markup the console must show as text, and a character outside the BMP
// just past the cut, which must not be split.
const REASON = `booking <b>confirmed</b> & caller thanked us ${
  "x".repeat(153)
}🎉🎉 and more after the cut`;

Deno.test("the brain's end reason is kept in the record and shown on the console session header", async () => {
  // Ends once the caller has heard the greeting.
  const service = await startCallService(createBrain({
    onSessionStart: () => "Hello.",
    onHeard: (heard, session) => {
      if (heard.turnId === "greeting") session.end(REASON);
    },
    onTurn: () => {},
  }));
  try {
    const { sessionId } = await service.call();
    const record = await service.record(sessionId, "ended", 20_000);
    assertEquals(record.end_reason, "brain_ended");
    const kept = Array.from(REASON).slice(0, 200).join("");
    assertEquals(record.brain_end_reason, kept);
    assert(kept.endsWith("🎉🎉"), kept);

    const console = await signIn(service.api);
    const page = await console.get(`/console/sessions/${sessionId}`);
    assertEquals(page.status, 200);
    const header = page.html.slice(page.html.indexOf("<h1"), page.html.indexOf("<h2"));
    assert(header.includes('id="brain-end-reason"'), header);
    assert(header.includes("booking &lt;b&gt;confirmed&lt;/b&gt; &amp; caller"), header);
    assert(!header.includes("more after the cut"), header);
  } finally {
    await service.close();
  }
});
