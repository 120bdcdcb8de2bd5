// A whole call in Santali on the local engines alone: the brain answers in Ol Chiki, espeak-ng
// speaks it through the Hindi voice (transliterated to Devanagari), and a barge-in gives a Heard
// prefix of the Ol Chiki the brain sent, ending at a word boundary, never Devanagari. The caller
// is heard in English (local recognition is English only; the two language legs may differ).
import { assert, assertEquals } from "./helpers/assert.ts";
import {
  botAudioAfter,
  heardCutOffAtWord,
  speech,
  startCallService,
  waitForLog,
} from "./helpers/call_harness.ts";
import { createBrain } from "../sdk/brain/mod.ts";

// "Johar, the Santali language is written in Ol Chiki", four times: ~10 s of speech.
const SENTENCE = "ᱡᱚᱦᱟᱨ, ᱥᱟᱱᱛᱟᱲᱤ ᱯᱟᱹᱨᱥᱤ ᱚᱞ ᱪᱤᱠᱤ ᱛᱮ ᱚᱞᱚᱜ ᱠᱟᱱᱟ᱾";
const REPLY = [SENTENCE, SENTENCE, SENTENCE, SENTENCE].join(" ");

Deno.test("a call in Santali on the local engines: Ol Chiki spoken, heard as an Ol Chiki prefix", async () => {
  const turns: string[] = [];
  const brain = createBrain({
    onSessionStart: () => "ᱡᱚᱦᱟᱨ᱾",
    async *onTurn(turn) {
      turns.push(turn.text);
      if (turns.length === 1) yield REPLY;
    },
  });
  const service = await startCallService(brain);
  try {
    const { caller, sessionId } = await service.call({
      config: {
        tts: { voice: "VOICE_ARJUN", language: "LANGUAGE_SAT" },
        stt: { language: "LANGUAGE_EN" },
      },
    });
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);

    const asked = await caller.say(await speech("please tell me about your language"));
    await caller.waitForMessage(
      (m) =>
        m.type === "bot-output" &&
        String((m.data as { text: string }).text).startsWith("ᱡᱚᱦᱟᱨ,"),
      20_000,
    );
    await new Promise((r) => setTimeout(r, 2000));
    assert(botAudioAfter(caller, asked.startedAt) !== undefined, "the caller never heard the bot");
    const loud = caller.heardFrames.slice(-25).filter((f) => f.rms > 300).length;
    assert(loud > 5, "the bot was not speaking Santali when the caller barged in");

    await caller.say(await speech("stop, wait a moment"));
    // It ends where an Ol Chiki word ends: next comes a space or punctuation.
    const text = await heardCutOffAtWord(service, sessionId, REPLY, /^[\s,\u1C7E]/);
    assert(/^[\u1C50-\u1C7F\s,]+$/.test(text), `heard "${text}" is not Ol Chiki`);
    await waitForLog(service, sessionId, (e) => e.source === "to_brain" && e.kind === "cancel");

    await caller.hangUp();
    const record = await service.record(sessionId, "ended");
    assertEquals(turns.length >= 1, true);
    const t1 = record.timings.turns.find((t: { turn_id: string }) => t.turn_id === "t1");
    assertEquals(t1.engines.synthesis, ["espeak-ng"]);
    const cut = t1.units.find((u: { cut_off: boolean }) => u.cut_off);
    // espeak-ng's own word timings: the heard text is not an estimate.
    assertEquals([cut.engine, cut.heard, Boolean(cut.heard_estimated)], ["espeak-ng", text, false]);
  } finally {
    await service.close();
  }
});
