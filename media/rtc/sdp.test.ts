import assert from "node:assert/strict";
import {
  candidateAddress,
  keepCandidates,
  listCandidates,
  mediaSections,
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
