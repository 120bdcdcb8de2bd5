import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { answerOffer } from "./sdp.ts";

const LOCAL = { address: "198.51.100.7", port: 40000, sessionId: "1", version: 1 };
const offer = (...media: string[]) =>
  ["v=0", "o=- 1 1 IN IP4 203.0.113.5", "s=-", "c=IN IP4 203.0.113.5", "t=0 0", ...media].join(
    "\r\n",
  ) + "\r\n";

Deno.test("the answer takes the first of PCMU and PCMA in the offer's order, with telephone-event", () => {
  const a = answerOffer(
    offer("m=audio 5004 RTP/AVP 9 8 0 101", "a=rtpmap:101 telephone-event/8000", "a=fmtp:101 0-16"),
    LOCAL,
  );
  assert(a.ok);
  assertEquals([a.choice.codec, a.choice.payloadType, a.choice.dtmfPayloadType], ["PCMA", 8, 101]);
  assertEquals([a.choice.remoteAddress, a.choice.remotePort], ["203.0.113.5", 5004]);
  assert(
    a.sdp.includes(
      "m=audio 40000 RTP/AVP 8 101\r\na=rtpmap:8 PCMA/8000\r\na=rtpmap:101 telephone-event/8000",
    ),
    a.sdp,
  );
  assert(a.sdp.includes("c=IN IP4 198.51.100.7"));
});

Deno.test("a dynamic payload type mapped to PCMU is taken; telephone-event at 16 kHz is not", () => {
  const a = answerOffer(
    offer(
      "m=audio 5004 RTP/AVP 96 97",
      "a=rtpmap:96 pcmu/8000",
      "a=rtpmap:97 telephone-event/16000",
    ),
    LOCAL,
  );
  assert(a.ok);
  assertEquals([a.choice.codec, a.choice.payloadType, a.choice.dtmfPayloadType], [
    "PCMU",
    96,
    undefined,
  ]);
});

Deno.test("an offer without PCMU or PCMA at 8 kHz is refused with the reason", () => {
  const a = answerOffer(offer("m=audio 5004 RTP/AVP 9 111", "a=rtpmap:111 opus/48000/2"), LOCAL);
  assertEquals(a, { ok: false, reason: "no audio stream in PCMU or PCMA at 8 kHz over RTP/AVP" });
  assert(
    !answerOffer(offer("m=audio 5004 RTP/SAVP 0"), LOCAL).ok,
    "SRTP is not offered silently as RTP",
  );
  assert(!answerOffer("hello", LOCAL).ok);
});

Deno.test("a video stream is refused with port 0 beside the audio answer", () => {
  const a = answerOffer(offer("m=video 5006 RTP/AVP 96", "m=audio 5004 RTP/AVP 0"), LOCAL);
  assert(a.ok);
  assert(a.sdp.includes("m=video 0 RTP/AVP 96\r\nm=audio 40000 RTP/AVP 0"), a.sdp);
});

Deno.test("a hold offer (sendonly) is answered recvonly, and ptime is kept", () => {
  const a = answerOffer(offer("m=audio 5004 RTP/AVP 0", "a=sendonly", "a=ptime:30"), LOCAL);
  assert(a.ok);
  assertEquals([a.choice.direction, a.choice.ptime], ["recvonly", 30]);
  assert(a.sdp.endsWith("a=ptime:30\r\na=recvonly\r\n"));
});

Deno.test("red/8000 over telephone-event (RFC 2198) is answered; red over anything else is not", () => {
  const a = answerOffer(
    offer(
      "m=audio 5004 RTP/AVP 0 101 99",
      "a=rtpmap:101 telephone-event/8000",
      "a=rtpmap:99 red/8000",
      "a=fmtp:99 101/101/101",
    ),
    LOCAL,
  );
  assert(a.ok);
  assertEquals([a.choice.dtmfPayloadType, a.choice.redPayloadType], [101, 99]);
  assert(a.sdp.includes("m=audio 40000 RTP/AVP 0 101 99\r\n"), a.sdp);
  assert(a.sdp.includes("a=rtpmap:99 red/8000\r\na=fmtp:99 101/101\r\n"), a.sdp);
  const audioRed = answerOffer(
    offer(
      "m=audio 5004 RTP/AVP 0 101 99",
      "a=rtpmap:101 telephone-event/8000",
      "a=rtpmap:99 red/8000",
      "a=fmtp:99 0/101",
    ),
    LOCAL,
  );
  assert(audioRed.ok);
  assertEquals(audioRed.choice.redPayloadType, undefined);
  assert(!audioRed.sdp.includes("red/8000"), audioRed.sdp);
});
