import assert from "node:assert/strict";
import {
  candidateAddress,
  keepCandidates,
  listCandidates,
  mediaSections,
  missingForACall,
  stripCandidates,
} from "./sdp.ts";

const SDP = [
  "v=0",
  "m=audio 9 UDP/TLS/RTP/SAVPF 111",
  "a=candidate:1 1 udp 2116026367 127.0.0.1 39028 typ host generation 0",
  "a=candidate:2 1 udp 2116026367 192.0.2.2 33206 typ host generation 0",
  "a=end-of-candidates",
  "a=sendrecv",
  "a=mid:0",
  "a=rtpmap:111 opus/48000/2",
  "m=video 0 UDP/TLS/RTP/SAVPF 96",
  "a=recvonly",
  "a=mid:1",
  "",
].join("\r\n");

Deno.test("candidate address is the fifth field, with or without the a= prefix", () => {
  assert.equal(candidateAddress("candidate:1 1 udp 1 10.0.0.1 5000 typ host"), "10.0.0.1");
  assert.equal(candidateAddress("a=candidate:1 1 udp 1 10.0.0.1 5000 typ host"), "10.0.0.1");
  assert.equal(candidateAddress(""), undefined);
  assert.equal(candidateAddress("candidate:1 1 udp"), undefined);
});

Deno.test("only candidates of allowed addresses are kept, line endings preserved", () => {
  const out = keepCandidates(SDP, new Set(["127.0.0.1"]));
  assert.deepEqual(listCandidates(out), [
    "candidate:1 1 udp 2116026367 127.0.0.1 39028 typ host generation 0",
  ]);
  assert.ok(out.includes("a=end-of-candidates\r\n"));
  const stripped = stripCandidates(SDP);
  assert.equal(listCandidates(stripped).length, 0);
  assert.ok(!stripped.includes("end-of-candidates"), "trickle offer must not claim completeness");
});

Deno.test("media sections report kind, port, mid, direction and codecs", () => {
  assert.deepEqual(mediaSections(SDP), [
    { kind: "audio", port: 9, mid: "0", direction: "sendrecv", rtpmap: ["111 opus/48000/2"] },
    { kind: "video", port: 0, mid: "1", direction: "recvonly", rtpmap: [] },
  ]);
});

/** A Chrome offer as the Pipecat client sends it (codec lists shortened): fingerprint per section. */
const FP = "sha-256 5D:2E:91:0B:7A:63:CC:18:4F:E0:3A:9D:B2:71:56:08:C4:1F:E7:92:6B:3D:A0:58:" +
  "17:CE:84:F9:2A:60:D3:B5";
const CHROME = [
  "v=0",
  "o=- 4611731400430051336 2 IN IP4 127.0.0.1",
  "s=-",
  "t=0 0",
  "a=group:BUNDLE 0 1 2 3",
  "a=extmap-allow-mixed",
  "a=msid-semantic: WMS 1b0e3f2c",
  ...["audio", "video", "video", "application"].flatMap((kind, mid) => [
    kind === "application"
      ? "m=application 9 UDP/DTLS/SCTP webrtc-datachannel"
      : `m=${kind} 9 UDP/TLS/RTP/SAVPF ${kind === "audio" ? "111 63 9 0 8" : "96 97"}`,
    "c=IN IP4 0.0.0.0",
    "a=ice-ufrag:Qx7e",
    "a=ice-pwd:b3VzZ1mE9n2qUr5oYtW8kLcP",
    "a=ice-options:trickle",
    `a=fingerprint:${FP}`,
    "a=setup:actpass",
    `a=mid:${mid}`,
    ...(kind === "audio" ? ["a=sendrecv", "a=rtcp-mux", "a=rtpmap:111 opus/48000/2"] : []),
    ...(kind === "video" ? ["a=rtcp-mux", "a=rtpmap:96 VP8/90000"] : []),
    ...(kind === "application" ? ["a=sctp-port:5000", "a=max-message-size:262144"] : []),
  ]),
  "",
].join("\r\n");

const without = (sdp: string, prefix: string) =>
  sdp.split("\r\n").filter((l) => !l.startsWith(prefix)).join("\r\n");

Deno.test("a browser's offer has everything a call needs", () => {
  assert.equal(missingForACall(CHROME), undefined);
  // Firefox writes the fingerprint once, at session level: it counts for every section.
  const sessionLevel = without(CHROME, "a=fingerprint:").replace(
    "a=group:BUNDLE",
    `a=fingerprint:${FP}\r\na=group:BUNDLE`,
  );
  assert.equal(missingForACall(sessionLevel), undefined);
  // A section not in use (port 0) needs no transport of its own.
  const unused = CHROME.replace(
    "m=video 9 UDP/TLS/RTP/SAVPF 96 97",
    "m=video 0 UDP/TLS/RTP/SAVPF 96",
  )
    .replace(/(m=video 0[^]*?)a=ice-pwd:\S+\r\n/, "$1");
  assert.equal(unused.split("a=ice-pwd:").length, 4, "the unused section has no ice-pwd");
  assert.equal(missingForACall(unused), undefined);
});

Deno.test("an offer without a DTLS fingerprint is named as such", () => {
  assert.match(
    missingForACall(without(CHROME, "a=fingerprint:"))!,
    /^media section 0 \(audio\) has no a=fingerprint/,
  );
  // Only the data channel's section lacks one.
  const lines = CHROME.split("\r\n");
  const last = lines.findLastIndex((l) => l.startsWith("a=fingerprint:"));
  lines.splice(last, 1);
  assert.match(
    missingForACall(lines.join("\r\n"))!,
    /^media section 3 \(application\) has no a=fingerprint/,
  );
  // Cut inside the hash, or a hash werift cannot check the certificate with.
  const cut = CHROME.replace(FP, FP.slice(0, 40));
  assert.match(missingForACall(cut)!, /has no usable a=fingerprint/);
  const md5 = CHROME.replaceAll(FP, "md5 5D:2E:91:0B:7A:63:CC:18:4F:E0:3A:9D:B2:71:56:08");
  assert.match(missingForACall(md5)!, /has no usable a=fingerprint/);
});

Deno.test("an offer cut in the middle of a line, before its data channel, is named as such", () => {
  const cut = CHROME.slice(0, CHROME.indexOf("m=application") - 20);
  assert.ok(!cut.endsWith("\n"), "cut inside a line");
  assert.match(
    missingForACall(cut)!,
    /no data channel \(m=application \.\.\. webrtc-datachannel\)/,
  );
  const rejected = CHROME.replace("m=application 9", "m=application 0");
  assert.match(missingForACall(rejected)!, /no data channel/);
});

Deno.test("an offer without ICE credentials or without Opus is named as such", () => {
  assert.match(
    missingForACall(without(CHROME, "a=ice-pwd:"))!,
    /section 0 \(audio\) has no a=ice-pwd/,
  );
  assert.match(
    missingForACall(CHROME.replaceAll("a=ice-ufrag:Qx7e", "a=ice-ufrag:"))!,
    /has no a=ice-ufrag/,
  );
  const noOpus = CHROME.replace("a=rtpmap:111 opus/48000/2", "a=rtpmap:0 PCMU/8000");
  assert.match(missingForACall(noOpus)!, /does not offer Opus/);
  assert.equal(missingForACall(without(CHROME, "m=audio")), "the offer has no audio m-line");
});
