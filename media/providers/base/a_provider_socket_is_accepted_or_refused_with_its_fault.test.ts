// The provider base's socket against a real local server: accepted when open (or at the
// provider's go-ahead), and otherwise closed and refused with the leg's error and its fault: a
// refused key (HTTP 403, a policy close) is `auth`, a silent or unreachable server `connection`,
// an error frame at the go-ahead what the provider says; an abort gives up the wait. The key
// never appears in a message.
import { assert, assertEquals } from "../../../tests/helpers/assert.ts";
import { freePort } from "../../../tests/helpers/process.ts";
import { SynthesisError } from "../../tts/engine.ts";
import { ProviderBase, type SocketAcceptance } from "./provider.ts";
import { REDACTED } from "./redact.ts";

const KEY = "sk-test/secret";

/** A WebSocket server doing `behave` with each upgraded socket; "refuse" answers 403 instead. */
function server(behave: ((socket: WebSocket) => void) | "refuse") {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    if (behave === "refuse") return new Response("no", { status: 403 });
    const { response, socket } = Deno.upgradeWebSocket(req);
    behave(socket);
    return response;
  });
}

function base(url: string, connectTimeoutMs = 1000) {
  return new ProviderBase("Acme", SynthesisError, { url, apiKey: KEY, connectTimeoutMs });
}

async function refusal(url: string, accept?: SocketAcceptance, ms?: number) {
  try {
    const ws = await base(url, ms).openSocket(url, { "x-key": KEY }, accept);
    ws.close();
  } catch (err) {
    assert(err instanceof SynthesisError, String(err));
    return err;
  }
  throw new Error("accepted");
}

Deno.test("a socket is accepted once open, or at the provider's go-ahead", async () => {
  await using srv = server((s) => {
    s.onopen = () => setTimeout(() => s.send("begin"), 50);
  });
  const url = `ws://127.0.0.1:${srv.addr.port}`;
  const open = await base(url).openSocket(url, {});
  assertEquals(open.readyState, WebSocket.OPEN);
  open.close();
  const begun = await base(url).openSocket(url, {}, {
    onMessage: (data) => data === "begin" || undefined,
  });
  assertEquals(begun.readyState, WebSocket.OPEN);
  begun.close();
});

Deno.test("a refused key is an auth fault, by status or by a policy close; the key unsaid", async () => {
  await using refused = server("refuse");
  const byStatus = await refusal(`ws://127.0.0.1:${refused.addr.port}/?key=${KEY}`);
  assertEquals(byStatus.fault, "auth");
  assert(/HTTP 403/.test(byStatus.message), byStatus.message);
  assert(!byStatus.message.includes(KEY), byStatus.message);

  await using policy = server((s) => {
    s.onopen = () => s.close(1008, `bad key ${KEY}`);
  });
  const byClose = await refusal(`ws://127.0.0.1:${policy.addr.port}`, {
    onMessage: () => undefined,
    closeFault: (code) => code === 1008 ? "auth" : "connection",
  });
  assertEquals(byClose.fault, "auth");
  assertEquals(byClose.message, `Acme refused the connection (code 1008: bad key ${REDACTED})`);
});

Deno.test("a provider that cannot be reached or never accepts is a connection fault", async () => {
  const away = await refusal(`ws://127.0.0.1:${freePort()}`);
  assertEquals(away.fault, "connection");

  await using silent = server(() => {});
  const url = `ws://127.0.0.1:${silent.addr.port}`;
  const late = await refusal(url, { onMessage: () => undefined }, 200);
  assertEquals(late.fault, "connection");
  assertEquals(late.message, "could not connect to Acme in 200 ms");
});

Deno.test("an error frame at the go-ahead refuses with what the provider said", async () => {
  await using srv = server((s) => {
    s.onopen = () => s.send(`denied ${KEY}`);
  });
  const err = await refusal(`ws://127.0.0.1:${srv.addr.port}`, {
    onMessage: (data) => ({ refused: `Acme said ${data}`, fault: "auth" }),
  });
  assertEquals(err.fault, "auth");
  assertEquals(err.message, `Acme said denied ${REDACTED}`);
});

Deno.test("an abort gives up the wait with its reason and closes the socket", async () => {
  let closed!: () => void;
  const serverSawClose = new Promise<void>((resolve) => (closed = resolve));
  await using srv = server((s) => {
    s.onclose = () => closed();
  });
  const url = `ws://127.0.0.1:${srv.addr.port}`;
  const ac = new AbortController();
  let created: WebSocket | undefined;
  const waiting = base(url).openSocket(url, {}, {
    onMessage: () => undefined,
    signal: ac.signal,
    created: (ws) => (created = ws),
  });
  await new Promise((r) => setTimeout(r, 100));
  const reason = new Error("barge-in");
  ac.abort(reason);
  let got: unknown;
  try {
    await waiting;
  } catch (err) {
    got = err;
  }
  assertEquals(got, reason);
  await serverSawClose;
  assert(created && created.readyState >= WebSocket.CLOSING);
});
