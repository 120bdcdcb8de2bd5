// A refused call on the demo page: Debian Chromium opens the built page, on an origin of its own
// with the API behind it, as `deno task run` serves it, and presses Call. With a key whose
// allowlist lacks the page's origin, and then with a wrong key, the page shows the service's own
// message (status and code) and what to do, beside "Status: refused", not only in the collapsed
// call log. No call is attempted.
//
// Sanitizers are off, as in demo_page_call.test.ts (playwright-core's handles).
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { makeTenant, startTestApi, type TestApi } from "../helpers/api_server.ts";
import { buildDemoPage } from "../../web/build.ts";
import { ARTIFACTS, type Browser, launchChromium, saveArtifact } from "./helpers/chromium.ts";
import { serveStatic, type StaticServer } from "./helpers/static_server.ts";
import type { Page } from "playwright-core";

async function pressCall(page: Page): Promise<void> {
  await page.evaluate(() =>
    (globalThis as unknown as { callPage: { ready: Promise<void> } }).callPage.ready
  );
  assertEquals(await page.isHidden("#refusal"), true, "nothing refused yet");
  await page.click("#call");
  await page.waitForSelector("#refusal", { state: "visible", timeout: 10_000 });
}

Deno.test({
  name: "Demo page: a refused call shows the service's message and what to do",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await Deno.mkdir(ARTIFACTS + "demo-refused", { recursive: true });
    let api: TestApi | undefined, site: StaticServer | undefined;
    let browser: Browser | undefined;
    try {
      api = await startTestApi();
      // The key allows another origin than the page's.
      const tenant = await makeTenant(api, "acme", { origins: ["https://app.example.com"] });
      const config: Record<string, string> = {};
      const dist = await buildDemoPage();
      site = serveStatic(dist, { files: config, proxy: { prefix: "/api/", to: api.url } });
      const setKey = (key: string) =>
        config["/demo-config.js"] = `globalThis.CALL_CONFIG = ${
          JSON.stringify({ publishableKey: key, agentId: tenant.agent_id })
        };`;
      browser = await launchChromium();

      setKey(tenant.pk);
      let page = await browser.open(`${site.origin}/`);
      await pressCall(page);
      assertEquals(await page.textContent("#phase"), "refused");
      assertEquals(
        await page.textContent("#refusal-said"),
        "The service refused the call (403 origin_not_allowed): This publishable key may not " +
          "be used from this origin.",
      );
      const todo = await page.textContent("#refusal-todo") ?? "";
      assert(
        todo.startsWith(
          `What to do: Give this page a publishable key whose allowed origins include ${site.origin} `,
        ),
        todo,
      );
      assertEquals(await page.isVisible("#log"), false, "the call log stays collapsed");
      assertEquals(
        await page.evaluate(() =>
          (globalThis as unknown as {
            callPage: { call?: { state: { connectAttempted: boolean } } };
          })
            .callPage.call?.state.connectAttempted
        ),
        false,
      );
      await saveArtifact("demo-refused/origin.png", await page.screenshot({ fullPage: true }));
      await page.close();

      setKey("pk_" + "x".repeat(32));
      page = await browser.open(`${site.origin}/`);
      await pressCall(page);
      assertMatch(
        await page.textContent("#refusal-said") ?? "",
        /^The service refused the call \(401 invalid_api_key\): The API key is not valid\.$/,
      );
      assertMatch(
        await page.textContent("#refusal-todo") ?? "",
        /^What to do: Give this page a current publishable key/,
      );
      await saveArtifact("demo-refused/key.png", await page.screenshot({ fullPage: true }));
    } finally {
      await saveArtifact("demo-refused/console.log", (browser?.log ?? []).join("\n") + "\n");
      await browser?.close();
      await site?.close();
      await api?.close();
    }
  },
});
