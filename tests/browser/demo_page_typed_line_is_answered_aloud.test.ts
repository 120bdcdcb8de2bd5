// Typed turns on the demo page: Debian Chromium opens the built page, calls a real worker with the
// example brain over a silent microphone, and the caller types a line in the text box. The page
// sends it with the Pipecat client's own sendText; the line shows in the transcript marked typed,
// the brain gets it as a typed turn (its transcript action says so), and its answer is spoken:
// the page marks the part the caller heard.
//
// Sanitizers are off, as in demo_page_call.test.ts (playwright-core's handles).
import { assert, assertEquals } from "../helpers/assert.ts";
import { type CallService, startCallService, waitForLog } from "../helpers/call_harness.ts";
import { createExampleBrain } from "../../sdk/brain/example/brain.ts";
import {
  ARTIFACTS,
  type Browser,
  launchChromium,
  saveArtifact,
  silentWav,
  waitForPage,
} from "./helpers/chromium.ts";
import { serveDemoPage } from "./helpers/demo_site.ts";
import { snapshotCallPage } from "./helpers/call_page.ts";
import type { StaticServer } from "./helpers/static_server.ts";
import type { Page } from "playwright-core";

const TYPED = "what are your opening hours";
const REPLY = `You said: ${TYPED}`;

Deno.test({
  name: "Demo page: a typed line goes as a typed turn and its answer is spoken and heard",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await Deno.mkdir(ARTIFACTS + "demo-typed", { recursive: true });
    const wav = await silentWav(30);
    let service: CallService | undefined, site: StaticServer | undefined;
    let browser: Browser | undefined, page: Page | undefined;
    try {
      service = await startCallService(createExampleBrain());
      site = await serveDemoPage(service);

      browser = await launchChromium({ fakeMicWav: wav });
      page = await browser.open(`${site.origin}/`);
      await page.evaluate(() =>
        (globalThis as unknown as { callPage: { ready: Promise<void> } }).callPage.ready
      );
      await page.click("#call");
      let s = await waitForPage(page, snapshotCallPage, (s) => s.state?.phase === "ready", 20_000);
      assertEquals(s.state?.phase, "ready", JSON.stringify(s.state));
      const sessionId = s.state!.sessionId!;
      // The greeting plays out first: the typed line is then a turn of its own, not a cut.
      s = await waitForPage(
        page,
        snapshotCallPage,
        (s) => s.bot.some((u) => u.status === "completed"),
        20_000,
      );

      await page.fill("#typed-text", TYPED);
      await page.click("#typed-send");

      s = await waitForPage(
        page,
        snapshotCallPage,
        (s) => s.transcript.some((l) => l.typed),
        10_000,
      );
      assertEquals(s.transcript.filter((l) => l.text.trim() !== ""), [
        { seq: s.transcript.find((l) => l.typed)!.seq, text: TYPED, final: true, typed: true },
      ]);
      assertEquals(await page.locator("#conversation li.user.typed .text").textContent(), TYPED);
      assertEquals(await page.inputValue("#typed-text"), "", "the box is cleared once sent");

      // The brain saw a typed turn: its transcript action says so.
      s = await waitForPage(
        page,
        snapshotCallPage,
        (s) => s.actions.some((a) => a.type === "transcript"),
        10_000,
      );
      const shown = s.actions.find((a) => a.type === "transcript")?.data as
        | { text: string; typed: boolean }
        | undefined;
      assertEquals([shown?.text, shown?.typed], [TYPED, true]);

      // Its answer is spoken: the page marks the part the caller heard, the worker logs it heard.
      s = await waitForPage(
        page,
        snapshotCallPage,
        (s) => s.bot.some((u) => u.text === REPLY && u.status === "completed"),
        20_000,
      );
      const answer = s.bot.find((u) => u.text === REPLY);
      assert(answer && answer.heard.trim() === REPLY, `answer: ${JSON.stringify(s.bot)}`);
      const heard = await page.locator("#conversation li.bot", { hasText: "You said" })
        .locator(".heard").allTextContents();
      assertEquals(heard.map((h) => h.trim()), [REPLY]);
      const heardLog = await waitForLog(
        service,
        sessionId,
        (e) => e.source === "to_brain" && e.kind === "heard" && e.data.text === REPLY,
      );
      assertEquals(heardLog.data.cut_off, false);
      await saveArtifact(
        "demo-typed/answered.png",
        await page.screenshot({ fullPage: true }),
      );

      await page.click("#hangup");
      const record = await service.record(sessionId, "ended");
      const typed = record.timings.turns.filter((t: { trigger: string }) => t.trigger === "typed");
      assertEquals(typed.map((t: { user_text: string }) => t.user_text), [TYPED]);
    } finally {
      await saveArtifact("demo-typed/console.log", (browser?.log ?? []).join("\n") + "\n");
      await browser?.close();
      await site?.close();
      if (service) {
        await saveArtifact("demo-typed/worker.log", service.worker.child.output());
        await service.close();
      }
      await Deno.remove(wav).catch(() => {});
    }
  },
});
