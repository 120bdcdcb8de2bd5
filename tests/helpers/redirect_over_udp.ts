// The SIP redirect server on the real API service, driven over a raw UDP socket: for what SIPp's
// scenarios do not reach (hand-made Authorization headers, replays, floods from one address).
// A digest trunk (+15550101, username "acme", realm "voice"), a number without a trunk
// (+15550100) and one SIP worker node of 10 slots.
import dgram from "node:dgram";
import { createHash } from "node:crypto";
import { assert } from "./assert.ts";
import { startTestApi } from "./api_server.ts";
import { registerNode } from "../../db/nodes.ts";
import { startSipRedirect } from "../../api/sip/start.ts";

export const PASSWORD = "stale nonce password";
const md5 = (s: string) => createHash("md5").update(s).digest("hex");

export async function redirectOverUdp(env: Record<string, string> = {}) {
  const api = await startTestApi(env, { node: false });
  const admin = async (path: string, body: unknown) =>
    (await api.admin(`/api/v1/${path}`, body)).body;
  const { agent } = await admin("agents.create", {
    tenant: "acme",
    name: "Reception",
    brain_url: "wss://brain.example.test/voice",
  });
  const { trunk } = await admin("trunks.create", {
    name: "digest",
    auth_username: "acme",
    auth_password: PASSWORD,
  });
  await admin("numbers.create", {
    number: "+15550101",
    agent_id: agent.agent_id,
    trunk_id: trunk.trunk_id,
  });
  const open = await admin("numbers.create", { number: "+15550100", agent_id: agent.agent_id });
  assert(open.phone_number);
  await registerNode(api.db.sql, {
    node_id: "worker-sip",
    offer_base_url: "http://127.0.0.1:9/",
    capacity: 10,
    sip_address: "127.0.0.1",
    sip_port: 5099,
  });
  // Another number of the same digest trunk: what a captured answer must not open.
  await admin("numbers.create", {
    number: "+15550105",
    agent_id: agent.agent_id,
    trunk_id: trunk.trunk_id,
  });
  const sip = await startSipRedirect(api.deps, { host: "127.0.0.1", port: 0 });
  const senders: { close(): void }[] = [];
  /** A UDP socket at `address` (any 127.x.y.z is this host) sending to the redirect server. */
  const sender = async (address = "127.0.0.1") => {
    const socket = dgram.createSocket("udp4");
    await new Promise<void>((ok) => socket.bind(0, address, ok));
    senders.push(socket);
    const inbox: string[] = [];
    socket.on("message", (m) => inbox.push(m.toString()));
    const send = (text: string) => socket.send(text, sip.port, "127.0.0.1");
    /**
     * The next response with a status >= 200 (to the INVITE of `branch` when given: final
     * responses to earlier INVITEs are retransmitted until ACKed), within 3 s.
     */
    const final = async (branch?: string) => {
      for (let i = 0; i < 300; i++) {
        const at = inbox.findIndex((m) =>
          /^SIP\/2\.0 [2-6]\d\d /.test(m) &&
          (branch === undefined || m.includes(`;branch=z9hG4bK${branch};`))
        );
        if (at >= 0) return inbox.splice(0, at + 1).at(-1)!;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`no final response; got ${inbox.join("\n---\n")}`);
    };
    const invite = (number: string, branch: string, extra = "") =>
      [
        `INVITE sip:${number}@127.0.0.1:${sip.port} SIP/2.0`,
        `Via: SIP/2.0/UDP ${address}:${socket.address().port};branch=z9hG4bK${branch};rport`,
        `From: <sip:+15550111@127.0.0.1>;tag=t${branch}`,
        `To: <sip:${number}@127.0.0.1>`,
        `Call-ID: ${branch}@test`,
        "CSeq: 1 INVITE",
        "Max-Forwards: 70",
        ...(extra ? [extra] : []),
        "Content-Length: 0",
        "",
        "",
      ].join("\r\n");
    /** INVITE → final response in one step. */
    const ask = async (number: string, branch: string, extra = "") => {
      send(invite(number, branch, extra));
      return await final(branch);
    };
    return { send, final, invite, ask };
  };
  return {
    api,
    sip,
    trunkId: trunk.trunk_id as string,
    sender,
    ...await sender(),
    close: async () => {
      for (const s of senders) s.close();
      await sip.close();
      await api.close();
    },
  };
}

/** The Request-URI the helper's INVITEs carry for `number`. */
export const requestUri = (number: string, port: number) => `sip:${number}@127.0.0.1:${port}`;

/** The first challenge's nonce in a 401. */
export function nonceOf(response: string): string {
  const m = /nonce="([^"]+)"/.exec(response);
  assert(m, `no nonce in:\n${response}`);
  return m[1];
}

export function authorization(
  nonce: string,
  uri: string,
  password = PASSWORD,
  nc = "00000001",
): string {
  const ha1 = md5(`acme:voice:${password}`);
  const ha2 = md5(`INVITE:${uri}`);
  const response = md5(`${ha1}:${nonce}:${nc}:c0ffee:auth:${ha2}`);
  return `Authorization: Digest username="acme", realm="voice", nonce="${nonce}", uri="${uri}", ` +
    `response="${response}", algorithm=MD5, qop=auth, nc=${nc}, cnonce="c0ffee"`;
}
