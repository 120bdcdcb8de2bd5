// When the service ends a call, the demo page says why: Debian Chromium opens the built page,
// calls a real worker, and asks the brain (by a client message) to end the call; the page must
// show the end reason the session is recorded with, not just "ended", and list it nowhere among
// the brain's actions.
//
// Sanitizers are off, as in demo_page_call.test.ts (playwright-core's handles).
import { assert, assertEquals } from "../helpers/assert.ts";
import { type CallService, startCallService } from "../helpers/call_harness.ts";
import { createBrain } from "../../sdk/brain/mod.ts";
import type { CallState } from "../../web/call/call.ts";
import type { Action, BotUnit } from "../../web/call/conversation.ts";
import {
  ARTIFACTS,
  type Browser,
  launchChromium,
  saveArtifact,
  silentWav,
  waitForPage,
} from "./helpers/chromium.ts";
import { serveDemoPage } from "./helpers/demo_site.ts";
import type { StaticServer } from "./helpers/static_server.ts";
import type { Page } from "playwright-core";

const GREETING = "Hello. Send bye to end the call.";

interface Snapshot {
  state?: CallState;
  bot: BotUnit[];
  actions: Action[];
}

function snapshot(page: Page): Promise<Snapshot> {
  return page.evaluate(() => {
    const p = (globalThis as unknown as {
      callPage: {
        call?: { state: CallState };
        conversation: { bot: BotUnit[]; actions: Action[] };
      };
    }).callPage;
    return JSON.parse(JSON.stringify({
      state: p.call?.state,
      bot: p.conversation.bot,
      actions: p.conversation.actions,
    }));
  });
}

Deno.test({
  name: "Demo page: when the brain ends the call, the page shows why (brain_ended)",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await Deno.mkdir(ARTIFACTS + "demo", { recursive: true });
    const wav = await silentWav(10);
    const brain = createBrain({
      onSessionStart: () => GREETING,
      async *onTurn() {}, // the microphone is silent: no turn is expected
      onRtvi: (message, session) => {
        const t = (message.data as { t?: unknown } | undefined)?.t;
        if (t === "bye") session.end();
      },
    });
    let service: CallService | undefined, site: StaticServer | undefined;
    let browser: Browser | undefined, page: Page | undefined;
    try {
      service = await startCallService(brain);
      site = await serveDemoPage(service);

      browser = await launchChromium({ fakeMicWav: wav });
      page = await browser.open(`${site.origin}/`);
      await page.evaluate(() =>
        (globalThis as unknown as { callPage: { ready: Promise<void> } }).callPage.ready
      );
      assertEquals(await page.isHidden("#end-reason"), true);
      await page.click("#call");
      let s = await waitForPage(
        page,
        snapshot,
        (s) => s.bot.some((u) => u.text === GREETING && u.status === "completed"),
        30_000,
      );
      assertEquals(s.state?.phase, "ready", JSON.stringify(s.state));
      const sessionId = s.state?.sessionId;
      assert(sessionId, "no session id on the page");

      await page.fill("#msg-type", "bye");
      await page.fill("#msg-data", "");
      await page.click("#msg-send");
      s = await waitForPage(page, snapshot, (s) => s.state?.end !== undefined, 20_000);
      assertEquals(s.state?.end, { status: "ended", reason: "brain_ended" });
      assertEquals(s.state?.phase, "ended");
      const record = await service.record(sessionId, "ended");
      assertEquals(record.end_reason, "brain_ended");

      const shown = await page.textContent("#end-reason");
      assertEquals(shown, "Call ended: the brain ended the call (brain_ended).");
      assertEquals(await page.isVisible("#end-reason"), true);
      assertEquals(await page.textContent("#phase"), "ended");
      // The worker's notice is not one of the brain's actions.
      assertEquals(s.actions, []);
    } finally {
      if (page) {
        await saveArtifact("demo/end-reason.png", await page.screenshot({ fullPage: true }))
          .catch(() => {});
      }
      await browser?.close();
      await site?.close();
      await service?.close();
      await Deno.remove(wav).catch(() => {});
    }
  },
});
