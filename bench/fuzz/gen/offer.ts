// Hostile input to the worker's offer endpoint: SDP mutated line by line from a real offer (as
// the test caller and the Pipecat client make it: audio, two videos, the "chat" data channel),
// offer bodies with wrong types and sizes, PATCH bodies of random candidates; each under a
// valid or an invalid session token.
import fc from "fast-check";
import { RTCPeerConnection } from "werift";
import { peerConfig } from "../../../media/rtc/config.ts";
import { keepCandidates, mediaSections, stripCandidates } from "../../../media/rtc/sdp.ts";
import { anyJson, headerText, type Json, nastyString, notJson, serialize } from "./json.ts";
import { setTimeout as sleep } from "node:timers/promises";

/** A real offer's SDP, with and without its host candidates (trickled or not). */
export interface BaseOffer {
  trickled: string;
  full: string;
}

/** Makes a real offer with werift, the way the test caller does, then closes the peer. */
export async function makeBaseOffer(): Promise<BaseOffer> {
  const pc = new RTCPeerConnection(peerConfig({ iceAddresses: ["127.0.0.1"] }));
  try {
    pc.addTransceiver("audio", { direction: "sendrecv" });
    pc.addTransceiver("video", { direction: "sendrecv" });
    pc.addTransceiver("video", { direction: "sendonly" });
    pc.createDataChannel("chat", { ordered: true });
    await pc.setLocalDescription(await pc.createOffer());
    const until = Date.now() + 3000;
    while (pc.iceGatheringState !== "complete" && Date.now() < until) {
      await sleep(20);
    }
    const full = keepCandidates(pc.localDescription!.sdp, new Set(["127.0.0.1"]));
    return { trickled: stripCandidates(full), full };
  } finally {
    await pc.close();
  }
}

// ---------- SDP ----------

/** Numbers that break parsers: zero, negatives, past 16/32/53 bits, not numbers at all. */
const nastyNumber = fc.constantFrom(
  "0",
  "-1",
  "65535",
  "65536",
  "4294967295",
  "4294967296",
  "9007199254740993",
  "1e999",
  "NaN",
  "",
  "007",
  "0x10",
  "1.5",
);

/** Addresses a hostile candidate may name; only loopback, unroutable and documentation ranges. */
export const candidateAddress = fc.oneof(
  fc.integer({ min: 0, max: 255 }).map((n) => `127.0.0.${n}`),
  fc.integer({ min: 1, max: 254 }).map((n) => `192.0.2.${n}`),
  fc.constantFrom(
    "127.0.0.1",
    "0.0.0.0",
    "255.255.255.255",
    "224.0.0.1",
    "198.51.100.7",
    "203.0.113.9",
    "::1",
    "::",
    "999.1.1.1",
    "1.2.3",
    "",
    "localhost",
  ),
);

const candidateLine = fc.record({
  foundation: fc.oneof(fc.stringMatching(/^[a-z0-9]{1,8}$/), nastyNumber),
  component: fc.oneof(fc.constantFrom("1", "2"), nastyNumber),
  transport: fc.constantFrom("udp", "UDP", "tcp", "sctp", "x"),
  priority: fc.oneof(fc.constant("2130706431"), nastyNumber),
  address: candidateAddress,
  port: fc.oneof(fc.integer({ min: 1, max: 65535 }).map(String), nastyNumber),
  type: fc.constantFrom("host", "srflx", "relay", "prflx", "x", ""),
  tail: fc.constantFrom("", " generation 0", " raddr 0.0.0.0 rport 0", " tcptype passive", " x"),
}).map((c) =>
  `candidate:${c.foundation} ${c.component} ${c.transport} ${c.priority} ${c.address} ${c.port} typ ${c.type}${c.tail}`
);

/** Attribute lines an offer may carry, with values from plausible to absurd. */
const attributeLine = fc.oneof(
  candidateLine.map((c) => `a=${c}`),
  fc.tuple(
    fc.oneof(fc.integer({ min: 0, max: 127 }).map(String), nastyNumber),
    fc.constantFrom(
      "opus/48000/2",
      "opus/48000",
      "PCMU/8000",
      "VP8/90000",
      "H264/90000",
      "opus/0/0",
      "x/y/z",
      "",
    ),
  ).map(([pt, codec]) => `a=rtpmap:${pt} ${codec}`),
  fc.tuple(nastyNumber, headerText(40)).map(([pt, v]) => `a=fmtp:${pt} ${v}`),
  fc.tuple(nastyNumber, headerText(30)).map(([id, uri]) => `a=extmap:${id} ${uri}`),
  fc.tuple(nastyNumber, headerText(30)).map(([ssrc, v]) => `a=ssrc:${ssrc} ${v}`),
  fc.tuple(nastyNumber, nastyNumber).map(([a, b]) => `a=ssrc-group:FID ${a} ${b}`),
  headerText(30).map((v) => `a=mid:${v}`),
  headerText(30).map((v) => `a=msid:${v}`),
  headerText(40).map((v) => `a=group:BUNDLE ${v}`),
  fc.oneof(headerText(40), fc.constant("")).map((v) => `a=ice-ufrag:${v}`),
  fc.oneof(headerText(40), fc.constant("")).map((v) => `a=ice-pwd:${v}`),
  fc.tuple(fc.constantFrom("sha-256", "sha-1", "md5", "x"), headerText(100)).map(([a, v]) =>
    `a=fingerprint:${a} ${v}`
  ),
  fc.constantFrom("actpass", "active", "passive", "holdconn", "").map((v) => `a=setup:${v}`),
  nastyNumber.map((v) => `a=sctp-port:${v}`),
  nastyNumber.map((v) => `a=max-message-size:${v}`),
  fc.constantFrom("sendrecv", "sendonly", "recvonly", "inactive").map((d) => `a=${d}`),
  fc.constantFrom(
    "a=rtcp-mux",
    "a=rtcp-rsize",
    "a=end-of-candidates",
    "a=ice-options:trickle ice2",
    "a=extmap-allow-mixed",
    "a=ice-lite",
    "a=rtcp:9 IN IP4 0.0.0.0",
    "a=rid:h send",
    "a=simulcast:send h;m",
    "a=sctpmap:5000 webrtc-datachannel 1024",
  ),
  fc.tuple(fc.stringMatching(/^[a-z-]{1,12}$/), headerText(30)).map(([k, v]) => `a=${k}:${v}`),
);

/** Whole lines that are not attributes: other SDP types, junk, nasty text, a very long line. */
const otherLine = fc.oneof(
  fc.tuple(
    fc.constantFrom("audio", "video", "application", "text", "message"),
    nastyNumber,
    fc.constantFrom(
      "UDP/TLS/RTP/SAVPF",
      "UDP/DTLS/SCTP",
      "RTP/AVP",
      "TCP/TLS/RTP/SAVPF",
      "x",
    ),
    fc.constantFrom("111", "96", "webrtc-datachannel", "", "0 8 96 97 98 99 100 101 102 103"),
  ).map(([k, port, proto, fmt]) => `m=${k} ${port} ${proto} ${fmt}`),
  fc.constantFrom(
    "v=1",
    "o=- 0 0 IN IP4 127.0.0.1",
    "o=",
    "s=-",
    "t=0 0",
    "c=IN IP6 ::1",
    "c=IN IP4 999.0.0.1",
    "b=AS:4294967296",
    "i=x",
    "z=0",
    "",
    " ",
    "=",
    "a=",
    "a",
  ),
  headerText(60),
  nastyString,
  fc.constantFrom(2_000, 20_000).map((n) => `a=x-long:${"y".repeat(n)}`),
);

export type SdpMutation =
  | { op: "drop"; at: number }
  | { op: "duplicate"; at: number }
  | { op: "swap"; at: number; with: number }
  | { op: "replace"; at: number; line: string }
  | { op: "insert"; at: number; line: string }
  | { op: "field"; at: number; field: number; value: string }
  | { op: "truncate"; at: number }
  | { op: "repeat-section"; at: number; times: number; fresh: boolean }
  | { op: "drop-section"; at: number }
  | { op: "eol"; eol: string }
  | { op: "no-audio" };

export const sdpMutation: fc.Arbitrary<SdpMutation> = fc.oneof(
  { arbitrary: fc.nat().map((at) => ({ op: "drop" as const, at })), weight: 4 },
  { arbitrary: fc.nat().map((at) => ({ op: "duplicate" as const, at })), weight: 2 },
  {
    arbitrary: fc.tuple(fc.nat(), fc.nat()).map(([at, w]) => ({
      op: "swap" as const,
      at,
      with: w,
    })),
    weight: 2,
  },
  {
    arbitrary: fc.tuple(fc.nat(), fc.oneof(attributeLine, otherLine)).map(([at, line]) => ({
      op: "replace" as const,
      at,
      line,
    })),
    weight: 4,
  },
  {
    arbitrary: fc.tuple(fc.nat(), fc.oneof(attributeLine, otherLine)).map(([at, line]) => ({
      op: "insert" as const,
      at,
      line,
    })),
    weight: 4,
  },
  {
    arbitrary: fc.tuple(fc.nat(), fc.nat(), fc.oneof(nastyNumber, headerText(12), nastyString))
      .map(([at, field, value]) => ({ op: "field" as const, at, field, value })),
    weight: 5,
  },
  { arbitrary: fc.nat().map((at) => ({ op: "truncate" as const, at })), weight: 1 },
  {
    // Mostly a few more sections; now and then as many as fit the 64 KiB body.
    arbitrary: fc.tuple(
      fc.nat(),
      fc.oneof(
        { arbitrary: fc.integer({ min: 1, max: 4 }), weight: 20 },
        { arbitrary: fc.integer({ min: 5, max: 40 }), weight: 3 },
        { arbitrary: fc.constant(140), weight: 1 },
      ),
      // fresh: each copy gets its own mid, outside the BUNDLE group (a transport of its own).
      fc.boolean(),
    ).map(([at, times, fresh]) => ({ op: "repeat-section" as const, at, times, fresh })),
    weight: 1,
  },
  { arbitrary: fc.nat().map((at) => ({ op: "drop-section" as const, at })), weight: 1 },
  {
    arbitrary: fc.constantFrom("\n", "\r", "\r\r\n").map((eol) => ({ op: "eol" as const, eol })),
    weight: 1,
  },
  { arbitrary: fc.constant({ op: "no-audio" as const }), weight: 1 },
);

/** Splits SDP into its session part and media sections (each a list of lines). */
function sections(lines: string[]): string[][] {
  const out: string[][] = [[]];
  for (const l of lines) {
    if (l.startsWith("m=")) out.push([]);
    out[out.length - 1].push(l);
  }
  return out;
}

export function mutateSdp(sdp: string, ms: SdpMutation[]): string {
  let lines = sdp.split("\r\n").filter((l, i, all) => l !== "" || i < all.length - 1);
  let eol = "\r\n";
  let cut: number | undefined;
  for (const m of ms) {
    const n = Math.max(1, lines.length);
    switch (m.op) {
      case "drop":
        lines.splice(m.at % n, 1);
        break;
      case "duplicate":
        lines.splice(m.at % n, 0, lines[m.at % n] ?? "");
        break;
      case "swap": {
        const a = m.at % n, b = m.with % n;
        [lines[a], lines[b]] = [lines[b] ?? "", lines[a] ?? ""];
        break;
      }
      case "replace":
        lines[m.at % n] = m.line;
        break;
      case "insert":
        lines.splice(m.at % (n + 1), 0, m.line);
        break;
      case "field": {
        const i = m.at % n;
        const parts = (lines[i] ?? "").split(" ");
        parts[m.field % parts.length] = m.value;
        lines[i] = parts.join(" ");
        break;
      }
      case "truncate":
        cut = m.at;
        break;
      case "repeat-section": {
        const s = sections(lines);
        if (s.length < 2) break;
        const pick = 1 + (m.at % (s.length - 1));
        const copies = Array.from(
          { length: m.times },
          (_, i) =>
            m.fresh ? s[pick].map((l) => (l.startsWith("a=mid:") ? `a=mid:r${i}` : l)) : s[pick],
        ).flat();
        lines = [...s.flat(), ...copies];
        break;
      }
      case "drop-section": {
        const s = sections(lines);
        if (s.length < 2) break;
        s.splice(1 + (m.at % (s.length - 1)), 1);
        lines = s.flat();
        break;
      }
      case "eol":
        eol = m.eol;
        break;
      case "no-audio":
        lines = sections(lines).filter((s) => !s[0]?.startsWith("m=audio")).flat();
        break;
    }
  }
  const text = lines.join(eol) + eol;
  return cut === undefined ? text : text.slice(0, cut % (text.length + 1));
}

/** An SDP: mutated from the real offer mostly, sometimes random or not SDP at all. */
export function sdpText(base: BaseOffer): fc.Arbitrary<{ sdp: string; note: string }> {
  return fc.oneof(
    { arbitrary: fc.constant({ sdp: base.trickled, note: "the real offer" }), weight: 2 },
    {
      arbitrary: fc.tuple(
        fc.boolean(),
        fc.array(sdpMutation, { minLength: 1, maxLength: 4 }),
      ).map(([full, ms]) => ({
        sdp: mutateSdp(full ? base.full : base.trickled, ms),
        note: `mutated SDP (${ms.map((m) => m.op).join(",")})`,
      })),
      weight: 14,
    },
    {
      arbitrary: fc.array(fc.oneof(attributeLine, otherLine), { maxLength: 20 }).map((ls) => ({
        sdp: ["v=0", ...ls].join("\r\n") + "\r\n",
        note: "random SDP lines",
      })),
      weight: 2,
    },
    {
      arbitrary: fc.constantFrom(
        "v=0\r\n",
        "v=0\r\nm=audio 9 UDP 0\r\n",
        "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:0\r\n",
        "v=0\r\nm=audio 0 UDP/TLS/RTP/SAVPF 111\r\n",
        "x",
        "v=",
        "\u0000",
      ).map((sdp) => ({ sdp, note: "minimal SDP" })),
      weight: 1,
    },
    { arbitrary: nastyString.map((s) => ({ sdp: `v=0\r\n${s}`, note: "nasty SDP" })), weight: 1 },
  );
}

// ---------- request bodies ----------

/** Marks where the live call's pc_id goes in a body (substituted when it is sent). */
export const PC_ID = "\u0001pc_id";

const pcId = fc.oneof(
  { arbitrary: fc.constant<Json>(PC_ID), weight: 6 },
  { arbitrary: fc.constant<Json>(null), weight: 2 },
  { arbitrary: anyJson, weight: 1 },
  { arbitrary: fc.constantFrom<Json>("pc_0000", "", `${PC_ID}x`), weight: 1 },
);

/** A POST body: a well-formed offer around the SDP mostly, wrong shapes and sizes sometimes. */
export function offerBody(
  base: BaseOffer,
): fc.Arbitrary<{ text: string | Uint8Array; note: string }> {
  const sdp = sdpText(base);
  const shaped = fc.record({
    sdp,
    pc_id: pcId,
    restart_pc: fc.oneof(
      { arbitrary: fc.constant<Json>(false), weight: 8 },
      { arbitrary: fc.constant<Json>(true), weight: 1 },
      { arbitrary: anyJson, weight: 1 },
    ),
    type: fc.oneof(
      { arbitrary: fc.constant<Json>("offer"), weight: 10 },
      {
        arbitrary: fc.constantFrom<Json>("answer", "pranswer", "rollback", "OFFER", "", null, 1),
        weight: 1,
      },
    ),
    extra: fc.option(fc.dictionary(fc.string({ maxLength: 10 }), anyJson, { maxKeys: 3 }), {
      nil: undefined,
    }),
    sdpType: fc.oneof(
      { arbitrary: fc.constant("string"), weight: 20 },
      { arbitrary: fc.constantFrom("number", "array", "object", "null", "missing"), weight: 1 },
    ),
  }).map((r) => {
    const body: Record<string, Json> = {
      sdp: r.sdp.sdp,
      type: r.type,
      pc_id: r.pc_id,
      restart_pc: r.restart_pc,
      ...(r.extra as Record<string, Json> | undefined ?? {}),
    };
    if (r.sdpType === "number") body.sdp = 1;
    if (r.sdpType === "array") body.sdp = [r.sdp.sdp];
    if (r.sdpType === "object") body.sdp = { sdp: r.sdp.sdp };
    if (r.sdpType === "null") body.sdp = null;
    if (r.sdpType === "missing") delete body.sdp;
    return { text: serialize(body), note: `${r.sdp.note}; sdp ${r.sdpType}; type ${r.type}` };
  });
  return fc.oneof(
    { arbitrary: shaped, weight: 12 },
    {
      arbitrary: anyJson.map((v) => ({ text: serialize(v), note: "random JSON offer" })),
      weight: 1,
    },
    {
      arbitrary: notJson(fc.constant({ sdp: base.trickled, type: "offer" })).map((b) => ({
        text: b,
        note: "offer not JSON",
      })),
      weight: 1,
    },
    {
      arbitrary: fc.constantFrom(65_000, 65_537, 200_000).map((n) => ({
        text: JSON.stringify({
          sdp: base.trickled + "a=x:" + "y".repeat(n) + "\r\n",
          type: "offer",
        }),
        note: `offer of ${n} bytes`,
      })),
      weight: 1,
    },
  );
}

const trickle = fc.record({
  candidate: fc.oneof(
    { arbitrary: candidateLine, weight: 6 },
    { arbitrary: candidateLine.map((c) => `a=${c}`), weight: 1 },
    { arbitrary: fc.constantFrom("", " ", "candidate:", "a=end-of-candidates"), weight: 1 },
    { arbitrary: nastyString, weight: 1 },
  ),
  sdp_mid: fc.oneof(fc.constantFrom<Json>("0", "1", "3", null), anyJson),
  sdp_mline_index: fc.oneof(fc.constantFrom<Json>(0, 1, 3, null, -1, 65536), anyJson),
}).map((c) => c as Json);

/** A PATCH body: trickled candidates, their count from none to as many as 64 KiB holds. */
export const patchBody: fc.Arbitrary<{ text: string | Uint8Array; note: string }> = fc.oneof(
  {
    arbitrary: fc.record({
      pc_id: pcId,
      candidates: fc.oneof(
        { arbitrary: fc.array(trickle, { maxLength: 5 }), weight: 8 },
        { arbitrary: fc.array(fc.oneof(trickle, anyJson), { maxLength: 5 }), weight: 2 },
        {
          arbitrary: fc.constantFrom(50, 400).chain((n) =>
            fc.array(trickle, { minLength: n, maxLength: n })
          ),
          weight: 1,
        },
        { arbitrary: anyJson, weight: 1 },
      ),
    }).map((b) => ({
      text: serialize(b as Json),
      note: `PATCH of ${Array.isArray(b.candidates) ? b.candidates.length : "no"} candidates`,
    })),
    weight: 10,
  },
  { arbitrary: anyJson.map((v) => ({ text: serialize(v), note: "random JSON PATCH" })), weight: 1 },
  {
    arbitrary: notJson(fc.constant({ pc_id: PC_ID, candidates: [] })).map((b) => ({
      text: b,
      note: "PATCH not JSON",
    })),
    weight: 1,
  },
);

// ---------- whole requests ----------

export type TokenKind =
  | "valid"
  | "none"
  | "garbage"
  | "malformed"
  | "forged"
  | "other-session"
  | "expired"
  | "other-node";

export interface OfferInput {
  method: "POST" | "PATCH";
  /** "fresh": a session whose call has not started; "live": the running call's session. */
  target: "fresh" | "live";
  token: TokenKind;
  /** For token "garbage": the Authorization header sent. */
  garbage: string;
  body: string | Uint8Array;
  note: string;
}

export function offerInput(base: BaseOffer): fc.Arbitrary<OfferInput> {
  const token = fc.oneof(
    { arbitrary: fc.constant<TokenKind>("valid"), weight: 14 },
    {
      arbitrary: fc.constantFrom<TokenKind>(
        "none",
        "garbage",
        "malformed",
        "forged",
        "other-session",
        "expired",
        "other-node",
      ),
      weight: 6,
    },
  );
  return fc.record({
    kind: fc.oneof(
      { arbitrary: fc.constant("post-fresh"), weight: 12 },
      { arbitrary: fc.constant("patch-fresh"), weight: 2 },
      { arbitrary: fc.constant("post-live"), weight: 2 },
      { arbitrary: fc.constant("patch-live"), weight: 3 },
    ),
    token,
    garbage: fc.oneof(headerText(80), fc.constantFrom("Bearer", "Bearer a.b.c", "Basic x", "")),
    offer: offerBody(base),
    patch: patchBody,
  }).map((r) => {
    const method = r.kind.startsWith("post") ? "POST" as const : "PATCH" as const;
    const body = method === "POST" ? r.offer : r.patch;
    return {
      method,
      target: r.kind.endsWith("live") ? "live" as const : "fresh" as const,
      token: r.token,
      garbage: r.garbage,
      body: body.text,
      note: `${r.kind}, token ${r.token}: ${body.note}`,
    };
  });
}

/** The SDP a POST input offers, when its body is JSON with a string `sdp`. */
export function offeredSdp(input: OfferInput): string | undefined {
  if (input.method !== "POST" || input.body === undefined) return undefined;
  try {
    // Bytes are read as the worker reads a body: UTF-8, a leading BOM dropped (RFC 8259 lets a
    // parser ignore it), invalid UTF-8 refused; so a BOM before valid JSON is a valid offer.
    const text = typeof input.body === "string"
      ? input.body
      : new TextDecoder("utf-8", { fatal: true }).decode(input.body);
    const sdp = JSON.parse(text)?.sdp;
    return typeof sdp === "string" ? sdp : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The offer's SDP has a media section without `a=mid`: werift's createAnswer then throws a plain
 * Error, which the worker answers 500 (reported; the fix belongs in media/rtc/peer.ts). The CI
 * sample leaves these out until it is fixed; the bench keeps them and counts the 500s.
 */
export function offersSectionWithoutMid(input: OfferInput): boolean {
  const sdp = offeredSdp(input);
  return sdp !== undefined && mediaSections(sdp).some((m) => m.mid === undefined);
}

/**
 * The offer has more media sections than the Pipecat client's four and a few spare: dozens of
 * them outside the BUNDLE group make werift open a transport each, stall the worker's event loop
 * and hold up later offers for seconds (reported; no limit exists yet). The CI sample leaves
 * them out to stay fast; the bench keeps them.
 */
export function offersManySections(input: OfferInput): boolean {
  const sdp = offeredSdp(input);
  return sdp !== undefined && mediaSections(sdp).length > 8;
}
