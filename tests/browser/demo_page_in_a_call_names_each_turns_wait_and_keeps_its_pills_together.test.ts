// The demo page during a real call, at 1000 px: Debian Chromium calls the whole service (API, a
// worker process with the local speech engines, the example brain) through a fake microphone
// that says one line, then the caller types one. While the call runs the status reads "in a
// call", not the "ready" a page shows before calling; the two speaking pills stay side by side
// on one line, where they were before the session id showed; and "How long you waited" lists
// each turn by its words, the typed line too, with its figure.
//
// Sanitizers are off, as in demo_page_call.test.ts (playwright-core's handles).
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { type CallService, startCallService } from "../helpers/call_harness.ts";
import { createExampleBrain } from "../../sdk/brain/example/brain.ts";
import {
  ARTIFACTS,
  type Browser,
  launchChromium,
  saveArtifact,
  waitForPage,
} from "./helpers/chromium.ts";
import { serveDemoPage } from "./helpers/demo_site.ts";
import { snapshotCallPage, spokenMicWav } from "./helpers/call_page.ts";
import type { StaticServer } from "./helpers/static_server.ts";
import type { Page } from "playwright-core";

const SAID = "what is the weather like today";
const TYPED = "what are your opening hours";

type Box = { x: number; y: number; width: number; height: number };

async function boxes(page: Page): Promise<{ user: Box; bot: Box; status: Box }> {
  const box = async (sel: string) => (await page.locator(sel).boundingBox())!;
  return {
    user: await box("#speaking-user"),
    bot: await box("#speaking-bot"),
    status: await box("#status"),
  };
}

Deno.test({
  name: "Demo page in a call: reads in a call, keeps its pills together, names each turn's wait",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await Deno.mkdir(ARTIFACTS + "demo-in-call", { recursive: true });
    // 4 s before the line (the greeting plays first), 20 s after it (the typed turn happens there).
    const wav = await spokenMicWav(SAID, 4, 20);
    let service: CallService | undefined, site: StaticServer | undefined;
    let browser: Browser | undefined, page: Page | undefined;
    try {
      service = await startCallService(createExampleBrain());
      site = await serveDemoPage(service);
      browser = await launchChromium({ fakeMicWav: wav });
      page = await browser.open(`${site.origin}/`);
      await page.setViewportSize({ width: 1000, height: 900 });
      await page.evaluate(() =>
        (globalThis as unknown as { callPage: { ready: Promise<void> } }).callPage.ready
      );
      const before = await boxes(page);

      await page.click("#call");
      let s = await waitForPage(page, snapshotCallPage, (s) => s.state?.phase === "ready", 20_000);
      assertEquals(s.state?.phase, "ready", JSON.stringify(s.state));
      assertEquals(await page.textContent("#phase"), "in a call");
      assertEquals(await page.getAttribute("#phase", "data-phase"), "ready");

      // The session id shows; the pills are where they were, side by side, one line each.
      assertEquals(await page.textContent("#session-id"), s.state!.sessionId);
      const during = await boxes(page);
      assertEquals(during.user.y, during.bot.y, "the pills are on one line");
      assertEquals([during.user, during.bot], [before.user, before.bot], "the pills moved");
      assert(during.bot.x > during.user.x + during.user.width, "the bot pill follows the caller's");
      assert(
        during.bot.x + during.bot.width <= during.status.x + during.status.width,
        "the bot pill overflows the status line",
      );
      for (const pill of [during.user, during.bot]) {
        assert(pill.height < 1.5 * 16 * 1.45 + 8, `a pill wraps: ${JSON.stringify(pill)}`);
      }

      // The spoken turn is listed by its words.
      s = await waitForPage(page, snapshotCallPage, (s) => s.latency.some((l) => !l.typed), 40_000);
      const spoken = s.latency.find((l) => !l.typed);
      assert(spoken && spoken.ms !== null && spoken.ms > 0, JSON.stringify(s.latency));
      const heard = s.transcript.find((l) => l.final && !l.typed && l.text.trim() !== "");
      assertEquals(spoken.said, heard?.text, "the figure is named by the turn's words");
      const first = await page.locator("#latency li").first().textContent();
      assertEquals(first, `"${spoken.said}": ${Math.round(spoken.ms)} ms`);

      // Once its answer has played, the caller types a line: it is listed too, marked typed.
      s = await waitForPage(
        page,
        snapshotCallPage,
        (s) => s.bot.some((u) => u.text.startsWith("You said:") && u.status === "completed"),
        20_000,
      );
      await new Promise((r) => setTimeout(r, 600)); // the answer's last audio has played out
      await page.fill("#typed-text", TYPED);
      await page.click("#typed-send");
      s = await waitForPage(page, snapshotCallPage, (s) => s.latency.some((l) => l.typed), 20_000);
      const typed = s.latency.find((l) => l.typed);
      assert(typed && typed.ms !== null && typed.ms > 0, JSON.stringify(s.latency));
      assertEquals(typed.said, TYPED);
      const lines = await page.locator("#latency li").allTextContents();
      assert(
        lines.includes(`"${TYPED}" (typed): ${Math.round(typed.ms)} ms`),
        JSON.stringify(lines),
      );
      assertMatch(await page.textContent("#latency-median") ?? "", /^\d+ ms$/);
      await saveArtifact("demo-in-call/in-call.png", await page.screenshot({ fullPage: true }));
      await page.click("#hangup");
    } finally {
      await saveArtifact("demo-in-call/console.log", (browser?.log ?? []).join("\n") + "\n");
      await browser?.close();
      await site?.close();
      if (service) {
        await saveArtifact("demo-in-call/worker.log", service.worker.child.output());
        await service.close();
      }
      await Deno.remove(wav).catch(() => {});
    }
  },
});
