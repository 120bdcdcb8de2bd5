// Debian's Chromium (never a downloaded browser) driven by playwright-core, headless, with a
// fake microphone that plays a WAV file in a loop, and a fresh profile per launch.
import { type BrowserContext, chromium, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const ARTIFACTS = new URL("../../../test-artifacts/", import.meta.url).pathname;

export interface Browser {
  context: BrowserContext;
  /** Opens a page whose console and errors are collected into `log`. */
  open(url: string): Promise<Page>;
  /** Console lines and page errors of every page opened, oldest first. */
  log: string[];
  close(): Promise<void>;
}

export interface ChromiumOptions {
  fakeMicWav?: string;
  /** Another way to start Debian's Chromium (e.g. netns.ts's wrapper script). */
  executablePath?: string;
  /**
   * An HTTP proxy for every request, loopback ones included (host:port), but the hosts in
   * `bypass`: Chromium also sends WebRTC's TCP connections to a configured proxy.
   */
  proxy?: { server: string; bypass?: string[] };
}

export async function launchChromium(options: ChromiumOptions = {}): Promise<Browser> {
  const profile = await Deno.makeTempDir({ prefix: "chromium-profile-" });
  const args = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--use-fake-ui-for-media-stream",
    "--use-fake-device-for-media-stream",
    // WebRTC leaves out 127.0.0.1 candidates without this; everything here is on loopback.
    "--allow-loopback-in-peer-connection",
    // Lets the page play and analyse the bot's audio without a click.
    "--autoplay-policy=no-user-gesture-required",
  ];
  if (options.fakeMicWav) args.push(`--use-file-for-fake-audio-capture=${options.fakeMicWav}`);
  if (options.proxy) {
    const bypass = ["<-loopback>", ...options.proxy.bypass ?? []].join(";");
    args.push(`--proxy-server=http://${options.proxy.server}`, `--proxy-bypass-list=${bypass}`);
  }
  // launchPersistentContext is playwright's way to pass --user-data-dir (a fresh one here).
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: options.executablePath ?? CHROMIUM,
    headless: true,
    args,
  });
  const log: string[] = [];
  return {
    context,
    log,
    async open(url) {
      const page = await context.newPage();
      page.on("console", (m) => log.push(`[${m.type()}] ${m.text()}`));
      page.on("pageerror", (e) => log.push(`[pageerror] ${e.message}`));
      await page.goto(url);
      return page;
    },
    async close() {
      await context.close().catch(() => {});
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  };
}

/** Writes `text` under test-artifacts/ (gitignored), creating the directory. */
export async function saveArtifact(name: string, data: string | Uint8Array): Promise<string> {
  await Deno.mkdir(ARTIFACTS, { recursive: true });
  const path = ARTIFACTS + name;
  if (typeof data === "string") await Deno.writeTextFile(path, data);
  else await Deno.writeFile(path, data);
  return path;
}

/**
 * Reads the page with `read` every `everyMs` until `ok` holds or `ms` pass; returns the last
 * reading (the caller asserts on it, so a timeout shows what the page had).
 */
export async function waitForPage<S>(
  page: Page,
  read: (page: Page) => Promise<S>,
  ok: (s: S) => boolean,
  ms: number,
  everyMs = 150,
): Promise<S> {
  const until = Date.now() + ms;
  let s = await read(page);
  while (!ok(s) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, everyMs));
    s = await read(page);
  }
  return s;
}

/** `seconds` of silence as a WAV for the fake microphone (Chromium's default device beeps). */
export async function silentWav(seconds: number): Promise<string> {
  const out = await Deno.makeTempFile({ prefix: "silent-mic-", suffix: ".wav" });
  const sox = await new Deno.Command("sox", {
    args: ["-n", "-r", "48000", "-c", "1", "-b", "16", out, "trim", "0", String(seconds)],
  }).output();
  if (!sox.success) throw new Error(new TextDecoder().decode(sox.stderr));
  return out;
}
