// The operator console in Debian's Chromium: sign in with the admin token, create an agent and
// see its secret key once, open the sessions list and a seeded session (turn timeline,
// heard/cut-off transcript, log, a recording the <audio> element loads through the console).
// Screenshots go to test-artifacts/console/.
//
// Sanitizers are off: playwright-core keeps handles open that Deno counts as leaks (see
// chromium_echo_call.test.ts).
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { makeTenant, startTestApi } from "../helpers/api_server.ts";
import { encodeWav } from "../../caller/wav.ts";
import { seedSession } from "../helpers/sample_session.ts";
import { recordingUrl as toFileUrl } from "../../media/call/recording.ts";
import { ARTIFACTS, type Browser, launchChromium } from "./helpers/chromium.ts";
import type { Page } from "playwright-core";

const SHOTS = `${ARTIFACTS}console/`;

async function shot(page: Page, name: string) {
  await page.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true });
}

Deno.test({
  name: "console in Chromium: sign in, create an agent, sessions list, a session's page",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await Deno.mkdir(SHOTS, { recursive: true });
    const recordings = await Deno.makeTempDir({ prefix: "console-recordings-" });
    // One second of a 440 Hz tone, so the player has a duration to report.
    const tone = Int16Array.from(
      { length: 16000 },
      (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 16000)),
    );
    await Deno.writeFile(`${recordings}/call.wav`, encodeWav({ sampleRate: 16000, samples: tone }));
    const api = await startTestApi({ RECORDINGS_DIR: recordings });
    let browser: Browser | undefined;
    try {
      const acme = await makeTenant(api, "acme");
      const seeded = await seedSession(api.db.sql, {
        ...acme,
        display_name: "Call with Ada",
        recording_url: toFileUrl(`${recordings}/call.wav`),
      });
      browser = await launchChromium();

      // Without the cookie, the console sends the browser to sign-in.
      const page = await browser.open(`${api.url}/console/agents`);
      assertEquals(new URL(page.url()).pathname, "/console/sign-in");
      await page.fill("input[name=token]", "not-the-token");
      await page.click("button[type=submit]");
      await page.waitForSelector(".notice.error");
      await shot(page, "01-sign-in-refused");
      await page.fill("input[name=token]", api.adminToken);
      await Promise.all([page.waitForURL("**/console/agents"), page.click("button[type=submit]")]);

      // Create an agent: the secret key is on the page once.
      await page.fill("input[name=tenant]", "globex");
      await page.fill("input[name=name]", "Night line");
      await page.fill("input[name=brain_url]", "wss://brain.globex.example/voice");
      await page.check("input[name=record_by_default]");
      await Promise.all([page.waitForLoadState(), page.click("text=Create agent")]);
      const key = (await page.textContent("#new-key"))?.trim() ?? "";
      assertMatch(key, /^sk_[A-Za-z0-9]{32}$/);
      assert(await page.isVisible("button[data-copy=new-key]"));
      await shot(page, "02-agent-created");
      await page.click("text=Back to agents");
      await page.waitForSelector("text=Night line");
      assert(!(await page.content()).includes(key), "the key is shown again on the list");
      await shot(page, "03-agents");

      // Its page: a publishable key for an origin, shown once; the secret key by prefix only.
      await Promise.all([page.waitForLoadState(), page.click("text=Night line")]);
      await page.fill("textarea[name=origins]", "https://app.globex.example");
      await Promise.all([page.waitForLoadState(), page.click("text=Create key")]);
      assertMatch((await page.textContent("#new-key"))?.trim() ?? "", /^pk_[A-Za-z0-9]{32}$/);
      assert(!(await page.content()).includes(key));
      assert(await page.isVisible(`text=${key.slice(0, 9)}…`));
      await shot(page, "03-agent-keys");

      // The sessions list shows the display name; its link opens the session page.
      await page.click("header >> text=Sessions");
      await page.waitForSelector("#sessions");
      assertEquals(
        await page.textContent(`a[href="/console/sessions/${seeded.session_id}"]`),
        "Call with Ada",
      );
      await shot(page, "04-sessions");
      await Promise.all([
        page.waitForURL(`**/console/sessions/${seeded.session_id}`),
        page.click("text=Call with Ada"),
      ]);
      assertEquals(await page.textContent("mark.heard >> nth=1"), seeded.heard);
      assertEquals(await page.textContent("s.cut"), seeded.cut);
      assertEquals(
        await page.textContent('tr[data-turn="t1"] td[data-latency="end_to_first_audio"]'),
        "938 ms",
      );
      // The player loads the recording through the console's route (the cookie goes along).
      const duration = await page.evaluate(() =>
        new Promise<number>((resolve) => {
          // deno-lint-ignore no-explicit-any
          const audio = (globalThis as any).document.querySelector("audio");
          if (audio.readyState >= 1) return resolve(audio.duration);
          audio.addEventListener("loadedmetadata", () => resolve(audio.duration));
          audio.addEventListener("error", () => resolve(-1));
          audio.load();
        })
      );
      assert(Math.abs(duration - 1) < 0.05, `recording duration ${duration}`);
      await page.click("#log tr[data-source=from_brain] summary >> nth=0");
      await shot(page, "05-session");
      const problems = browser.log.filter((l) => /^\[(error|pageerror)\]/.test(l));
      // The refused sign-in is a 401 document load, which Chromium logs as an error.
      assertEquals(problems.filter((l) => !/status of 401/.test(l)), []);
    } finally {
      await browser?.close();
      await api.close();
      await Deno.remove(recordings, { recursive: true });
    }
  },
});
