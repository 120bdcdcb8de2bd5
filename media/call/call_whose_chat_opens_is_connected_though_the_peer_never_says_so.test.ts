// Found by the Chromium test at 20 % loss: the page's data channel opened and the bot said
// bot-ready, but werift's connectionState never reached "connected", so the call sent no audio
// and ended as connect_timeout 20 s later. An open data channel runs over DTLS: the call counts
// the transport as up when either says so. The peer here is WorkerPeer's surface driven by hand,
// so the test can open the channel without the state change (the real race needs loss).
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { freshDatabase } from "../../tests/helpers/database.ts";
import { Emitter } from "../rtc/emitter.ts";
import type { PeerState, WorkerPeer } from "../rtc/peer.ts";
import { OpusRtpSender } from "../rtc/rtp_sender.ts";
import { Call } from "./call.ts";
import { SessionLog } from "./session_log.ts";
import { WebLine } from "./web_line.ts";

/** WorkerPeer's surface as the web line uses it: events emitted by the test, RTP counted. */
function handDrivenPeer() {
  const sent: number[] = [];
  const peer = {
    id: "pc_hand",
    onAudioRtp: new Emitter<[unknown]>(),
    onChatOpen: new Emitter(),
    onChatMessage: new Emitter<[string]>(),
    onChatClose: new Emitter(),
    onState: new Emitter<[PeerState]>(),
    chatOpen: false,
    chat: [] as string[],
    audio: new OpusRtpSender({
      ssrc: 1,
      sendRtp: (p) => (sent.push(p.header.sequenceNumber), Promise.resolve()),
    }),
    sendChat(text: string) {
      this.chat.push(text);
    },
    drainChat: () => Promise.resolve(true),
    close: () => Promise.resolve(),
  };
  return { peer, sent };
}

Deno.test("a call whose data channel opens sends audio and is not ended as connect_timeout, though the peer never reports connected", async () => {
  const db = await freshDatabase();
  const { peer, sent } = handDrivenPeer();
  const log = new SessionLog(db.sql, "ses_handdriven");
  const line = new WebLine(peer as unknown as WorkerPeer, {
    log,
    connectTimeoutMs: 400,
    livenessMs: 60_000,
  });
  const call = new Call(line, {
    sessionId: "ses_handdriven",
    tokenId: "tok",
    agentId: "agt",
    brainUrl: "echo:",
    sql: db.sql,
    log,
  });
  call.open();
  try {
    peer.onState.emit("connecting");
    peer.chatOpen = true;
    peer.onChatOpen.emit();
    await new Promise((r) => setTimeout(r, 700));
    assertEquals(call.endReason, undefined, `the call ended: ${call.endReason}`);
    assert(sent.length >= 10, `only ${sent.length} packets went out in 700 ms`);
  } finally {
    await call.end("ended", "test_over");
    await db.close();
  }
});
