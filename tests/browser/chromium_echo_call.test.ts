// The real browser path end to end: Debian Chromium opens web/call (the real Pipecat client and
// SmallWebRTC transport, bundled locally) from its own origin; the page calls sessions.connect
// with a pk_ key, sends the offer to the real worker process, gets bot-ready, and the caller's
// fake-microphone speech comes back through an echo call as audible energy on the bot's track.
//
// Sanitizers are off: playwright-core keeps its browser pipe, timers and child-process handles
// open in ways Deno's op/resource sanitizers count as leaks even after the browser is closed.
import { assert, assertEquals } from "../helpers/assert.ts";
import { makeTenant, startTestApi } from "../helpers/api_server.ts";
import { startWorkerProcess, type WorkerProcess } from "../helpers/process.ts";
import { speechWav } from "../helpers/audio.ts";
import { buildWeb } from "../../web/build.ts";
import type { CallState } from "../../web/call/call.ts";
import type { EnergySample } from "../../web/call/meter.ts";
import { type Browser, launchChromium, saveArtifact, waitForPage } from "./helpers/chromium.ts";
import { serveStatic } from "./helpers/static_server.ts";
import type { Page } from "playwright-core";

const CONNECT = "/api/v1/sessions.connect";
/** RMS the bot's track must exceed: espeak speech is around 0.1, Opus silence about 0. */
const SPEECH_RMS = 0.02;
/** ...and by this factor over the track's silence floor (its quietest tenth). */
const OVER_SILENCE = 10;

interface Snapshot {
  state?: CallState;
  bot: EnergySample[];
  mic: EnergySample[];
}

function snapshot(page: Page): Promise<Snapshot> {
  return page.evaluate(() => {
    const p = (globalThis as unknown as {
      callPage: {
        call?: { state: CallState };
        botMeter?: { samples: EnergySample[] };
        micMeter?: { samples: EnergySample[] };
      };
    }).callPage;
    return { state: p.call?.state, bot: p.botMeter?.samples ?? [], mic: p.micMeter?.samples ?? [] };
  });
}

/** Polls the page until `ok(snapshot)` or `ms` pass; returns the last snapshot either way. */

/** Peak and silence floor (10th percentile) of a series of RMS samples. */
function energy(samples: EnergySample[]) {
  const sorted = samples.map((x) => x.rms).sort((a, b) => a - b);
  return {
    peak: sorted.at(-1) ?? 0,
    floor: sorted[Math.floor(sorted.length * 0.1)] ?? 0,
    count: sorted.length,
  };
}

const spokeClearly = (samples: EnergySample[]) => {
  const e = energy(samples);
  // At least 2 s of samples, so the floor is measured over the file's silent padding too.
  return e.count >= 40 && e.peak > SPEECH_RMS && e.peak > OVER_SILENCE * e.floor;
};

Deno.test({
  name: "Chromium echo call: connect, bot-ready, bot audio track, own speech comes back",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const site = serveStatic(await buildWeb());
    const api = await startTestApi({}, { node: false });
    let worker: WorkerProcess | undefined, browser: Browser | undefined, page: Page | undefined;
    try {
      worker = await startWorkerProcess(api.db.url);
      // 1.5 s of silence each side of ~2.5 s of speech; Chromium loops the file.
      const wav = await speechWav("testing one two three, can you hear me", 1.5);
      browser = await launchChromium({ fakeMicWav: wav });
      const acme = await makeTenant(api, "acme", { brain_url: "echo:", origins: [site.origin] });
      const q = new URLSearchParams({ api: api.url, key: acme.pk, agent: acme.agent_id });
      page = await browser.open(`${site.origin}/call/index.html?${q}`);

      const requests: { method: string; url: string; authorization?: string }[] = [];
      page.on("request", (r) => {
        const h = r.headers();
        requests.push({ method: r.method(), url: r.url(), authorization: h.authorization });
      });
      let connectBody: { session_id: string; webrtc_request_params: Record<string, unknown> } =
        undefined!;
      page.on("response", async (r) => {
        if (r.url().endsWith(CONNECT) && r.request().method() === "POST") {
          connectBody = await r.json();
        }
      });

      await page.click("#call");
      let s = await waitForPage(page, snapshot, (s) => s.state?.botReady === true, 20_000, 100);
      assertEquals(s.state?.phase, "ready", `call did not get ready: ${JSON.stringify(s.state)}`);
      assertEquals((s.state?.botReadyData as { version?: string })?.version, "2.1.0");
      assert(s.state?.connected, "the transport reported connected");

      // The offer went to the endpoint sessions.connect named, with its token as a header.
      assert(connectBody, "the page's sessions.connect response was not seen");
      const endpoint = connectBody.webrtc_request_params.endpoint as string;
      assert(endpoint.startsWith(worker.url + "/sessions/" + connectBody.session_id));
      const offer = requests.find((r) => r.method === "POST" && r.url === endpoint);
      const headers = connectBody.webrtc_request_params.headers as Record<string, string>;
      assertEquals(offer?.authorization, headers.Authorization ?? headers.authorization);
      assertEquals(s.state?.sessionId, connectBody.session_id);

      s = await waitForPage(page, snapshot, (s) => s.state?.botAudioStarted === true, 5_000, 100);
      assert(s.state?.botAudioStarted, "trackStarted never fired for the bot's audio");

      // The fake microphone really speaks (else a silent echo would prove nothing)...
      s = await waitForPage(page, snapshot, (s) => spokeClearly(s.mic), 10_000, 100);
      assert(spokeClearly(s.mic), `microphone energy ${JSON.stringify(energy(s.mic))}`);
      // ...and that speech comes back on the bot's track, clearly above its silence.
      s = await waitForPage(page, snapshot, (s) => spokeClearly(s.bot), 15_000, 100);
      const bot = energy(s.bot);
      await saveArtifact(
        "chromium_echo_call.energy.json",
        JSON.stringify({ bot, mic: energy(s.mic), samples: { bot: s.bot, mic: s.mic } }),
      );
      assert(
        spokeClearly(s.bot),
        `bot audio energy ${JSON.stringify(bot)} (need peak > ${SPEECH_RMS} and > ` +
          `${OVER_SILENCE}x floor); mic ${JSON.stringify(energy(s.mic))}`,
      );

      // Hanging up in the page ends the session on the service's side.
      await page.click("#hangup");
      const until = Date.now() + 10_000;
      let record = await api.admin("/api/v1/sessions.get", { session_id: s.state!.sessionId });
      while (record.body.status !== "ended" && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 200));
        record = await api.admin("/api/v1/sessions.get", { session_id: s.state!.sessionId });
      }
      assertEquals([record.body.status, record.body.end_reason], ["ended", "hangup"]);
    } finally {
      // Kept for a look after any run, passing or not (test-artifacts/ is gitignored).
      const shot = await page?.screenshot({ fullPage: true }).catch(() => undefined);
      if (shot) await saveArtifact("chromium_echo_call.png", shot);
      await saveArtifact("chromium_echo_call.console.log", (browser?.log ?? []).join("\n") + "\n");
      await browser?.close();
      await worker?.stop();
      await saveArtifact("chromium_echo_call.worker.log", worker?.child.output() ?? "");
      await api.close();
      await site.close();
    }
  },
});

Deno.test({
  name: "Chromium: a page on an origin not on the key's allowlist gets 403 and never connects",
  sanitizeOps: false, // playwright-core, as above
  sanitizeResources: false,
  async fn() {
    const dist = await buildWeb();
    const allowed = serveStatic(dist);
    const other = serveStatic(dist); // the same page, another port: another origin
    // The API's placeholder node makes a connect possible had the origin been allowed.
    const api = await startTestApi();
    let browser: Browser | undefined;
    try {
      browser = await launchChromium();
      const acme = await makeTenant(api, "acme", { origins: [allowed.origin] });
      const q = new URLSearchParams({ api: api.url, key: acme.pk, agent: acme.agent_id });
      const page = await browser.open(`${other.origin}/call/index.html?${q}`);
      const requests: string[] = [];
      page.on("request", (r) => requests.push(`${r.method()} ${r.url()}`));

      await page.click("#call");
      const s = await waitForPage(page, snapshot, (s) => s.state?.phase === "refused", 10_000, 100);
      assertEquals(s.state?.refusal?.status, 403, JSON.stringify(s.state));
      assertEquals(s.state?.refusal?.code, "origin_not_allowed");
      assertEquals(s.state?.connectAttempted, false);
      // Nothing but the one sessions.connect left the page's own origin.
      const outside = requests.filter((r) => !r.includes(other.origin));
      assertEquals(outside, [`POST ${api.url}${CONNECT}`]);
      await saveArtifact("chromium_origin_refused.png", await page.screenshot({ fullPage: true }));
    } finally {
      await saveArtifact(
        "chromium_origin_refused.console.log",
        (browser?.log ?? []).join("\n") + "\n",
      );
      await browser?.close();
      await api.close();
      await allowed.close();
      await other.close();
    }
  },
});
