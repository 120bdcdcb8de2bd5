import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { Emitter } from "../rtc/emitter.ts";
import type { LineMedia } from "./sip_line.ts";
import type { AnswerChoice } from "./sdp.ts";
import { greetingReady, heldDialogs, HeldMedia } from "./ringing_call.ts";

function fakeRtp() {
  const calls: string[] = [];
  const media: LineMedia = {
    onCallerFrame: new Emitter(),
    onDtmf: new Emitter(),
    onMediaTimeout: new Emitter(),
    start: () => void calls.push("start"),
    update: () => void calls.push("update"),
    play: () => void calls.push("play"),
    clear: () => void calls.push("clear"),
    stats: () => ({}),
    pacing: { skipped: 0 },
    close: () => Promise.resolve(),
  };
  return { media, calls };
}

const CHOICE = { codec: "PCMU" } as unknown as AnswerChoice;

Deno.test("held media plays nothing before the answer and starts at it", () => {
  const { media, calls } = fakeRtp();
  const held = new HeldMedia(media);
  held.start(CHOICE, "127.0.0.1");
  held.play({ next: () => undefined });
  assertEquals(calls, ["play"], "the source is set, the pacer not started");
  held.answer();
  held.answer();
  assertEquals(calls, ["play", "start"], "started once, at the answer");
});

Deno.test("the answer waits for the greeting's audio, the call's end, or the bound", async () => {
  const speaker = { audioWaiting: false };
  const call = { conversation: { speaker }, endStatus: undefined as string | undefined };
  // deno-lint-ignore no-explicit-any
  const ready = (ms: number) => greetingReady(call as any, ms).then(() => true);
  const pending = ready(5_000);
  const first = await Promise.race([pending, new Promise((r) => setTimeout(() => r(false), 50))]);
  assertEquals(first, false, "nothing to play yet: still ringing");
  speaker.audioWaiting = true;
  assert(await pending, "the greeting's audio waits: answered");
  speaker.audioWaiting = false;
  call.endStatus = "failed";
  assert(await ready(5_000), "the call ended: the wait is over (it is refused, not answered)");
  call.endStatus = undefined;
  assert(await ready(30), "nothing came: the bound ends the wait");
});

Deno.test("a transfer asked for while the call rings is sent once it is answered", async () => {
  const sent: string[] = [];
  const dialogs = {
    hangUp: () => Promise.resolve(undefined),
    transfer: (_: string, to: string) => {
      sent.push(to);
      return Promise.resolve({ ok: true, detail: "200" });
    },
  };
  const held = new HeldMedia(fakeRtp().media);
  const result = heldDialogs(dialogs, held).transfer("c1", "tel:+14155550199");
  await new Promise((r) => setTimeout(r, 20));
  assertEquals(sent, [], "no REFER before the answer: there is no dialog");
  held.answer();
  assertEquals((await result).ok, true);
  assertEquals(sent, ["tel:+14155550199"]);
});

Deno.test("a held call's dialogs keep a warm transfer's Replaces and its REFER's own wait", async () => {
  const waits: (number | undefined)[] = [];
  const dialogs = {
    hangUp: () => Promise.resolve(undefined),
    transfer: (_: string, _to: string, outcomeMs?: number) => {
      waits.push(outcomeMs);
      return Promise.resolve({ ok: true, detail: "200" });
    },
    replacing: (callId: string) => `sip:desk@pbx?Replaces=${callId}`,
  };
  const held = new HeldMedia(fakeRtp().media);
  held.answer();
  const wrapped = heldDialogs(dialogs, held);
  assertEquals(wrapped.replacing?.("c2"), "sip:desk@pbx?Replaces=c2");
  await wrapped.transfer("c1", "sip:desk@pbx", 8000);
  assertEquals(waits, [8000]);
});
