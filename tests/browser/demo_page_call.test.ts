// The demo page end to end, the way a new user meets it: Debian Chromium opens web/call with its
// configuration from /demo-config.js and its API on its own origin (as `deno task run` serves it),
// picks a voice from /api/v1/capabilities, calls the whole service (API, a real worker process
// with the local speech engines, the example brain) and talks through a fake microphone. The
// page must show the greeting, the caller's words, the bot's answer with the part the caller
// heard marked, who is speaking, the brain's answer to a client message, and the session id.
//
// Sanitizers are off: playwright-core keeps its browser pipe, timers and child-process handles
// open in ways Deno's op/resource sanitizers count as leaks even after the browser is closed.
import { assert, assertEquals } from "../helpers/assert.ts";
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
import { type CallPageSnapshot, snapshotCallPage, spokenMicWav } from "./helpers/call_page.ts";
import type { StaticServer } from "./helpers/static_server.ts";
import type { Page } from "playwright-core";

const CONNECT = "/api/v1/sessions.connect";
const SAID = "what is the weather like today";
const GREETING = "Hello! I am the example brain.";

const shot = async (page: Page, name: string) =>
  await saveArtifact(`demo/${name}.png`, await page.screenshot({ fullPage: true }));

const speech = (s: CallPageSnapshot) => s.transcript.filter((l) => l.final && l.text.trim() !== "");
const answer = (s: CallPageSnapshot) =>
  s.bot.find((u) => u.text.startsWith("You said:") && u.heard);

Deno.test({
  name: "Demo page: a call shows greeting, transcript, heard answer, speaking, pong and session",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await Deno.mkdir(ARTIFACTS + "demo", { recursive: true });
    // 4 s before (the greeting plays uninterrupted), 7 s after (the answer plays to its end).
    const wav = await spokenMicWav(SAID, 4, 7);
    let service: CallService | undefined, site: StaticServer | undefined;
    let browser: Browser | undefined, page: Page | undefined;
    try {
      service = await startCallService(createExampleBrain());
      site = await serveDemoPage(service);

      browser = await launchChromium({ fakeMicWav: wav });
      page = await browser.open(`${site.origin}/`);
      const connects: { request: unknown; response?: { session_id: string } }[] = [];
      page.on("request", (r) => {
        if (r.url().endsWith(CONNECT) && r.method() === "POST") {
          connects.push({ request: r.postDataJSON() });
        }
      });
      page.on("response", async (r) => {
        if (r.url().endsWith(CONNECT) && r.request().method() === "POST") {
          const body = await r.json();
          const c = connects.find((c) => !c.response);
          if (c) c.response = body;
        }
      });

      // The pickers hold what the deployment offers; the caller picks a voice.
      await page.evaluate(() =>
        (globalThis as unknown as { callPage: { ready: Promise<void> } })
          .callPage.ready
      );
      const caps = await (await fetch(service.api.url + "/api/v1/capabilities")).json();
      const options = (sel: string) =>
        page!.$$eval(`${sel} option`, (os) => os.map((o) => (o as HTMLOptionElement).value));
      assertEquals(await options("#voice"), caps.voices);
      assertEquals(await options("#tts-language"), caps.tts_languages);
      assertEquals(await options("#stt-language"), caps.stt_languages);
      const voice = caps.voices.at(-1);
      await page.selectOption("#voice", voice);
      await shot(page, "1-before-call");

      await page.click("#call");
      let s = await waitForPage(page, snapshotCallPage, (s) => s.state?.phase === "ready", 20_000);
      assertEquals(s.state?.phase, "ready", `call did not get ready: ${JSON.stringify(s.state)}`);

      // The choice went into sessions.connect with both language legs; the id is on the page.
      assertEquals(connects.length, 1);
      const sent = connects[0].request as { agent_id: string; config: unknown };
      assertEquals(sent.config, {
        tts: { voice, language: caps.defaults.language },
        stt: { language: caps.defaults.language },
      });
      const sessionId = connects[0].response?.session_id;
      assert(sessionId, "the connect response was not seen");
      assertEquals(await page.textContent("#session-id"), sessionId);

      // The greeting is bot output.
      s = await waitForPage(
        page,
        snapshotCallPage,
        (s) => s.bot.some((u) => u.text.includes(GREETING)),
        20_000,
      );
      assert(
        s.bot.some((u) => u.text.includes(GREETING)),
        `no greeting in bot output: ${JSON.stringify(s.bot)}`,
      );
      await shot(page, "2-greeting");

      // The caller's words arrive as a final transcript line, shown in black.
      s = await waitForPage(page, snapshotCallPage, (s) => speech(s).length > 0, 30_000);
      assert(speech(s).length > 0, `no final caller transcript: ${JSON.stringify(s.transcript)}`);
      assert(
        await page.locator("#conversation li.user.final .text").count() > 0,
        "a final caller line is not on the page",
      );

      // The brain answers "You said: ..." and the part the caller heard is marked.
      s = await waitForPage(page, snapshotCallPage, (s) => answer(s) !== undefined, 30_000);
      const unit = answer(s);
      assert(unit, `no "You said:" bot output with heard text: ${JSON.stringify(s.bot)}`);
      assert(unit.text.startsWith(unit.heard.trimEnd()), JSON.stringify(unit));
      // On the page, the answer's line starts with a marked part that is a prefix of its text.
      const marked = await page.locator("#conversation li.bot", { hasText: "You said" })
        .locator(".heard").allTextContents();
      assert(
        marked.length > 0 && marked[0] !== "" && unit.text.startsWith(marked[0].trimEnd()),
        `no heard mark on the answer: ${JSON.stringify(marked)} of ${unit.text}`,
      );
      await shot(page, "3-answer-heard");

      // Who is speaking changed for both sides.
      const changes = s.speakingChanges.map((c) => `${c.who}:${c.speaking}`);
      for (const c of ["user:true", "user:false", "bot:true", "bot:false"]) {
        assert(changes.includes(c), `no ${c} speaking change in ${changes.join(" ")}`);
      }

      // A client message "ping" comes back from the brain as a "pong" action on the page.
      await page.fill("#msg-type", "ping");
      await page.fill("#msg-data", '{"n": 1}');
      await page.click("#msg-send");
      s = await waitForPage(
        page,
        snapshotCallPage,
        (s) => s.actions.some((a) => a.type === "pong"),
        10_000,
      );
      const pong = s.actions.find((a) => a.type === "pong");
      assert(pong, `no pong action: ${JSON.stringify(s.actions)}`);
      assertEquals((pong.data as { got: unknown }).got, { n: 1 });
      const shown = await page.locator("#actions li .type").allTextContents();
      assert(shown.includes("pong"), `actions shown: ${JSON.stringify(shown)}`);
      await shot(page, "4-pong");

      // Hanging up ends the session on the service's side.
      await page.click("#hangup");
      const record = await service.record(sessionId, "ended");
      assertEquals(record.end_reason, "hangup");
      await waitForPage(page, snapshotCallPage, (s) => s.state?.phase === "ended", 5_000);
      assertEquals(await page.textContent("#phase"), "ended");
    } finally {
      // Kept after any run, passing or not (test-artifacts/ is gitignored).
      if (page) await shot(page, "5-last").catch(() => {});
      await saveArtifact("demo/console.log", (browser?.log ?? []).join("\n") + "\n");
      await browser?.close();
      await site?.close();
      if (service) {
        await saveArtifact("demo/worker.log", service.worker.child.output());
        await service.close();
      }
      await Deno.remove(wav).catch(() => {});
    }
  },
});
