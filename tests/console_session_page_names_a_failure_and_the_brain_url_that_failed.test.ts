// A call whose brain cannot be reached fails; its console page says why where an operator looks
// first, not only in the raw log: the end reason, the worker's detail and the brain URL it dialled
// (which the agent may no longer have), with what to check. A call that ended well has no such
// section.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { startInProcessCallService } from "./helpers/call_harness.ts";
import { freePort } from "./helpers/process.ts";
import { endedAs, pageToldFatal } from "./helpers/fault_checks.ts";
import { signIn } from "./helpers/console_client.ts";
import { createBrain } from "../sdk/brain/mod.ts";

/** The text of the element with `id` in `html`, tags dropped. */
function textOf(html: string, id: string): string | undefined {
  const m = new RegExp(`<(\\w+)[^>]* id="${id}"[^>]*>([\\s\\S]*?)</\\1>`).exec(html);
  return m?.[2].replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim();
}

Deno.test("console: a failed session's page names the failure and the brain URL that failed", async () => {
  const service = await startInProcessCallService(
    createBrain({ onSessionStart: () => "Hello.", onTurn: () => "OK." }),
  );
  try {
    const url = `ws://127.0.0.1:${freePort()}/brain`; // nothing listens there
    const tenant = await service.tenantFor(url);
    const { caller, sessionId } = await service.callAs(tenant);
    await pageToldFatal(caller);
    const record = await endedAs(service, sessionId, "failed", "brain_unreachable");
    await caller.hangUp();
    // The agent is pointed elsewhere afterwards: the page still shows the URL that failed.
    await service.api.admin("/api/v1/agents.update", {
      agent_id: tenant.agent_id,
      brain_url: "ws://127.0.0.1:1/elsewhere",
    });

    const op = await signIn(service.api);
    const page = await op.get(`/console/sessions/${sessionId}`);
    assertEquals(page.status, 200);
    const failure = textOf(page.html, "failure");
    assert(failure, "no failure section on the page");
    const entry = record.log.find((e: { kind: string }) => e.kind === "brain_unreachable");
    assertEquals(entry.data.brain_url, url, "the worker logs the URL it dialled");
    assertMatch(failure, /Reason brain_unreachable/);
    assert(failure.includes(entry.data.detail), `detail missing: ${failure}`);
    assertMatch(failure, /the brain could not be reached/);
    assertEquals(textOf(page.html, "failed-brain-url"), url);
    assertMatch(failure, /Check that the brain is running at this URL/);

    // A call that ended well has no failure section.
    const ok = await service.call();
    await ok.caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
    await ok.caller.hangUp();
    await service.record(ok.sessionId, "ended");
    const okPage = await op.get(`/console/sessions/${ok.sessionId}`);
    assertEquals(textOf(okPage.html, "failure"), undefined);
  } finally {
    await service.close();
  }
});
