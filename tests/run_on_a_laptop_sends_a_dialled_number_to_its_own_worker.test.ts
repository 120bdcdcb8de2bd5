// `deno task run` takes phone calls on one laptop: its SIP redirect answers an INVITE for a number
// of the demo agent with a 302 to the worker it started, and that worker's SIP port (printed in
// the banner) answers. Before, the laptop's worker ran no SIP, so every INVITE got 503.
import { assert, assertEquals } from "./helpers/assert.ts";
import { freePort, spawnDenoWith } from "./helpers/process.ts";
import { bindUdp } from "../sip/udp.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** Sends one SIP request over UDP from a fresh socket; resolves with the first final response. */
async function ask(port: number, request: (local: number) => string): Promise<string> {
  let answer: (text: string) => void;
  const got = new Promise<string>((r) => (answer = r));
  const socket = await bindUdp("127.0.0.1", 0, (bytes) => {
    const text = new TextDecoder().decode(bytes);
    if (!/^SIP\/2\.0 1\d\d/.test(text)) answer(text);
  });
  try {
    socket.send(new TextEncoder().encode(request(socket.port)), { address: "127.0.0.1", port });
    const timeout = new Promise<string>((r) => setTimeout(() => r("(no answer)"), 10_000));
    return await Promise.race([got, timeout]);
  } finally {
    await socket.close();
  }
}

function request(method: string, uri: string, local: number, body = ""): string {
  const id = crypto.randomUUID();
  return [
    `${method} ${uri} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=z9hG4bK${id.slice(0, 8)};rport`,
    "Max-Forwards: 70",
    `From: <sip:+15550009999@127.0.0.1>;tag=${id.slice(9, 13)}`,
    `To: <${uri}>`,
    `Call-ID: ${id}`,
    `CSeq: 1 ${method}`,
    `Contact: <sip:caller@127.0.0.1:${local}>`,
    ...(body ? ["Content-Type: application/sdp"] : []),
    `Content-Length: ${new TextEncoder().encode(body).length}`,
    "",
    body,
  ].join("\r\n");
}

const OFFER = [
  "v=0",
  "o=- 1 1 IN IP4 127.0.0.1",
  "s=-",
  "c=IN IP4 127.0.0.1",
  "t=0 0",
  "m=audio 40000 RTP/AVP 0",
  "a=rtpmap:0 PCMU/8000",
  "",
].join("\r\n");

Deno.test("deno task run redirects a dialled number of the demo agent to its own worker, which answers SIP", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "run-sip-" });
  const [api, worker, brain, redirect] = [freePort(), freePort(), freePort(), freePort()];
  const child = spawnDenoWith(["run", "-A", "cli/run.ts"], {
    DATA_DIR: dataDir,
    API_PORT: String(api),
    WORKER_PORT: String(worker),
    BRAIN_PORT: String(brain),
    SIP_REDIRECT_PORT: String(redirect),
    DATABASE_URL: "",
  }, ROOT);
  try {
    const until = Date.now() + 180_000;
    while (!/Press Ctrl-C to stop/.test(child.output()) && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 200));
    }
    const out = child.output();
    const agent = out.match(/--agent (ag_\w+)/)?.[1];
    const adminToken = out.match(/admin token: (adm_\w+)/)?.[1];
    const workerSip = Number(out.match(/here sip:127\.0\.0\.1:(\d+)/)?.[1]);
    assert(agent && adminToken && workerSip > 0, `banner lacks the worker's SIP port:\n${out}`);

    const made = await fetch(`http://127.0.0.1:${api}/api/v1/numbers.create`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ number: "+15550001234", agent_id: agent }),
    });
    assertEquals(made.status, 200, await made.text());

    const uri = `sip:+15550001234@127.0.0.1:${redirect}`;
    const redirected = await ask(redirect, (local) => request("INVITE", uri, local, OFFER));
    assert(redirected.startsWith("SIP/2.0 302"), redirected);
    const contact = redirected.match(/^Contact: <sip:\+15550001234@127\.0\.0\.1:(\d+);session=/m);
    assertEquals(Number(contact?.[1]), workerSip, redirected);

    const options = await ask(
      workerSip,
      (local) => request("OPTIONS", `sip:127.0.0.1:${workerSip}`, local),
    );
    assert(options.startsWith("SIP/2.0 200"), options);
  } finally {
    const status = await child.stop("SIGINT");
    assertEquals(status.code, 0, child.output());
    await Deno.remove(dataDir, { recursive: true });
  }
});
