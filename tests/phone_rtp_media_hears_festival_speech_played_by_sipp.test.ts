// SIPp 3.6 (/usr/bin/sipp) as the far end's media: a UAS scenario answers an INVITE whose SDP
// names RtpMedia's port, and on the ACK plays festival speech as 8 kHz μ-law with its `rtp_stream`
// action, SIPp's own RTP packetizer (20 ms, payload 0). Three things SIPp 3.6 wants: the answer's
// port written [rtpstream_audio_port] (that makes the stream's socket, so the INVITE's SDP can
// name where to send), a loop count of 1 (0 plays nothing), and a raw file (it sends a WAV's
// header as audio). RtpMedia is driven directly (no UAS of ours: that wiring is the phone-call
// work); the test sends the INVITE, ACK and BYE from a raw UDP socket.
import dgram from "node:dgram";
import { assert, assertEquals } from "./helpers/assert.ts";
import { callerSpeechWav } from "./helpers/audio.ts";
import { bestLag, snrDb } from "./helpers/signal_compare.ts";
import { freeUdpPort, freeUdpPortRun, SIPP } from "./helpers/sipp.ts";
import { sdp, XML_HEAD } from "./helpers/sipp_scenario.ts";
import { readWav } from "../caller/wav.ts";
import { RtpMedia } from "../media/phone/rtp_media.ts";

const SENTENCE = "i am looking for a cheap hotel near the airport";

const SCENARIO = `${XML_HEAD}
<scenario name="festival speech by rtp_stream">
  <recv request="INVITE" />
  <send>
    <![CDATA[
      SIP/2.0 200 OK
      [last_Via:]
      [last_From:]
      [last_To:];tag=[pid]SIPpTag01[call_number]
      [last_Call-ID:]
      [last_CSeq:]
      Contact: <sip:[local_ip]:[local_port];transport=[transport]>
      Content-Type: application/sdp
      Content-Length: [len]

${sdp([0], { port: "[rtpstream_audio_port]" })}    ]]>
  </send>
  <recv request="ACK">
    <action>
      <exec rtp_stream="speech.ulaw,1,0" />
    </action>
  </recv>
  <recv request="BYE" />
  <send>
    <![CDATA[
      SIP/2.0 200 OK
      [last_Via:]
      [last_From:]
      [last_To:]
      [last_Call-ID:]
      [last_CSeq:]
      Content-Length: 0

    ]]>
  </send>
</scenario>
`;

function request(
  method: string,
  sipPort: number,
  ourPort: number,
  cseq: number,
  extra: string[],
  body = "",
) {
  return [
    `${method} sip:+15550100@127.0.0.1:${sipPort} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${ourPort};branch=z9hG4bK-${method}-${cseq}`,
    "From: <sip:+15550111@127.0.0.1>;tag=caller1",
    // In the dialog (ACK, BYE): the To of SIPp's 200, with its tag.
    extra.find((e) => e.startsWith("To:")) ?? "To: <sip:+15550100@127.0.0.1>",
    "Call-ID: phone-media-sipp@127.0.0.1",
    `CSeq: ${cseq} ${method === "ACK" ? "INVITE" : method}`,
    "Max-Forwards: 70",
    `Contact: <sip:127.0.0.1:${ourPort}>`,
    ...extra.filter((e) => !e.startsWith("To:")),
    `Content-Length: ${new TextEncoder().encode(body).length}`,
    "",
    body,
  ].join("\r\n");
}

Deno.test("festival speech that SIPp plays as μ-law RTP is heard: one frame per 20 ms it sent, the speech in them", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sipp-media-" });
  const wav8k = await callerSpeechWav(SENTENCE, 0.3, 8000);
  // SIPp 3.6 sends the file's bytes as they are (a WAV's header would go out as 58 bytes of
  // noise), so it gets raw 8 kHz μ-law, encoded by sox.
  const encoded = await new Deno.Command("sox", {
    args: ["-D", wav8k, "-t", "raw", "-e", "u-law", `${dir}/speech.ulaw`],
  }).output();
  assert(encoded.success, "sox made the μ-law file");
  await Deno.writeTextFile(`${dir}/uas.xml`, SCENARIO);
  const bytes = (await Deno.stat(`${dir}/speech.ulaw`)).size;
  const ref16k = (await readWav(await callerSpeechWav(SENTENCE, 0.3, 16000))).samples;

  const media = await RtpMedia.open({ host: "127.0.0.1" });
  const frames: Int16Array[] = [];
  media.onCallerFrame.on((f) => frames.push(f.slice()));
  const [sipPort, sippMedia] = [await freeUdpPort(), await freeUdpPortRun(4)];
  const sipp = new Deno.Command(SIPP, {
    args: [
      ...["-sf", `${dir}/uas.xml`, "-m", "1", "-i", "127.0.0.1", "-p", String(sipPort)],
      ...["-mp", String(sippMedia), "-t", "u1", "-nostdin", "-timeout", "30", "-timeout_error"],
      ...["-trace_err", "-error_file", `${dir}/errors.log`],
    ],
    cwd: dir,
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const socket = dgram.createSocket("udp4");
  const replies: string[] = [];
  socket.on("message", (m) => replies.push(new TextDecoder().decode(m)));
  await new Promise<void>((r) => socket.bind(0, "127.0.0.1", () => r()));
  const ourPort = socket.address().port;
  const send = (text: string) => socket.send(new TextEncoder().encode(text), sipPort, "127.0.0.1");
  try {
    const sdp = [
      "v=0",
      "o=- 1 1 IN IP4 127.0.0.1",
      "s=-",
      "c=IN IP4 127.0.0.1",
      "t=0 0",
      `m=audio ${media.port} RTP/AVP 0`,
      "a=rtpmap:0 PCMU/8000",
      "",
    ].join("\r\n");
    const invite = request("INVITE", sipPort, ourPort, 1, ["Content-Type: application/sdp"], sdp);
    // SIPp may not be listening yet: resend until it answers.
    for (let i = 0; i < 50 && !replies.some((r) => r.startsWith("SIP/2.0 200")); i++) {
      send(invite);
      await new Promise((r) => setTimeout(r, 100));
    }
    const ok = replies.find((r) => r.startsWith("SIP/2.0 200"));
    assert(ok, "SIPp answered 200");
    const toTag = /^To:.*$/m.exec(ok)![0];
    const port = Number(/m=audio (\d+)/.exec(ok)![1]);
    assertEquals(port, sippMedia);
    media.start({
      codec: "PCMU",
      payloadType: 0,
      remoteAddress: "127.0.0.1",
      remotePort: port,
      direction: "sendrecv",
      ptime: 20,
    });
    send(request("ACK", sipPort, ourPort, 1, [toTag]));
    // rtp_stream sends 160 bytes a packet, the last one padded: one frame each.
    const expected = Math.ceil(bytes / 160);
    const end = Date.now() + 15000;
    while (frames.length < expected && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 300)); // nothing more should come
    send(request("BYE", sipPort, ourPort, 2, [toTag]));
    const status = await sipp.output();
    const errors = await Deno.readTextFile(`${dir}/errors.log`).catch(() => "");
    assertEquals(status.code, 0, `SIPp: ${errors}`);
    await media.close();
    const s = media.stats();
    console.log(JSON.stringify({ frames: frames.length, expected, ...s }));
    assertEquals(frames.length, expected, "one frame per packet of 20 ms SIPp sent");
    assertEquals(s.packetsIn, frames.length);
    assertEquals([s.lost, s.concealedFrames], [0, 0]);
    const out = new Int16Array(frames.length * 320);
    frames.forEach((f, i) => out.set(f, i * 320));
    const lag = bestLag(ref16k, out, 320);
    const { snr, correlation } = snrDb(ref16k, out, lag);
    console.log(`lag ${lag}, SNR ${snr.toFixed(1)} dB, correlation ${correlation.toFixed(4)}`);
    assert(correlation > 0.98, `correlation ${correlation}`);
  } finally {
    try {
      sipp.kill();
    } catch { /* already exited */ }
    await sipp.status;
    await new Promise<void>((r) => socket.close(() => r()));
    await media.close();
    await Deno.remove(dir, { recursive: true });
  }
});
