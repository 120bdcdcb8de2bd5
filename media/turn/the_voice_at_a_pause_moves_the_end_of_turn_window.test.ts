// The prosody track (prosody.ts) on real speech: espeak-ng sentences with commas (its voice rises
// or stays level before a comma and falls at a full stop), at 16 kHz and through G.711 at 8 kHz
// and the worker's phone edge. What it reads at each pause, and the window the policy then picks.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { speechWav } from "../../tests/helpers/audio.ts";
import { throughPhone } from "../../tests/helpers/phone_speech.ts";
import { readWav } from "../../caller/wav.ts";
import { DEFAULT_END_OF_TURN_BOUNDS, EndOfTurnPolicy } from "./end_of_turn.ts";
import { endOfTurnDefaults } from "./lexicon.ts";
import { type ProsodyCues, ProsodyTrack } from "./prosody.ts";

type Band = "16k" | "8k";

async function spoken(text: string, band: Band): Promise<Int16Array> {
  if (band === "16k") return (await readWav(await speechWav(text, 0.3, 16000))).samples;
  return throughPhone((await readWav(await speechWav(text, 0.3, 8000))).samples);
}

/** The cues at every pause of 120 ms or more after speech, fed 20 ms frames as a call does. */
async function cuesAtPauses(text: string, band: Band): Promise<ProsodyCues[]> {
  const pcm = await spoken(text, band);
  const track = new ProsodyTrack();
  const found: ProsodyCues[] = [];
  let quiet = 0, spoke = false;
  for (let at = 0; at + 320 <= pcm.length; at += 320) {
    const frame = pcm.subarray(at, at + 320);
    track.push(frame);
    let energy = 0;
    for (const v of frame) energy += v * v;
    if (Math.sqrt(energy / 320) > 300) {
      spoke = true;
      quiet = 0;
    } else if (spoke && ++quiet === 6) found.push(track.cuesAt((at + 320) / 16 - 120));
  }
  return found;
}

for (const band of ["16k", "8k"] as const) {
  Deno.test(`${band}: a full stop ends in a final fall, the pauses at the commas do not`, async () => {
    for (
      const text of ["i want apples, bananas, and pears.", "could you send me the bill, by email."]
    ) {
      const cues = await cuesAtPauses(text, band);
      assert(cues.length >= 2, `${text}: ${JSON.stringify(cues)}`);
      const last = cues.at(-1)!;
      assert(last.finalFall, `${text} ends: ${JSON.stringify(last)}`);
      for (const mid of cues.slice(0, -1)) {
        assert(!mid.finalFall, `${text} mid pause: ${JSON.stringify(mid)}`);
      }
    }
  });

  Deno.test(`${band}: the window is shorter at the full stop than at the commas`, async () => {
    const policy = new EndOfTurnPolicy("en");
    const d = endOfTurnDefaults("en");
    // Neutral words: the voice moves them either way, waiting longer at the comma (left high)
    // and giving the complete window at the full stop (ended low).
    const list = await cuesAtPauses("i want apples, bananas, and pears.", band);
    const atComma = policy.windowMs("i want apples", list[0]);
    const atEnd = policy.windowMs("i want apples bananas and pears", list.at(-1));
    assert(atComma > d.neutral_ms, `an unfinished voice waits longer: ${atComma}`);
    assertEquals(atEnd, d.complete_ms, "neutral words that end low get the complete window");
    // Round 1's rules (the voice only confirms complete words): the words alone decide these.
    const round1 = Object.assign(new EndOfTurnPolicy("en"), {
      prosody: "confirm",
      numberGroups: false,
      endCue: "fall",
    });
    assertEquals(round1.windowMs("i want apples", list[0]), d.neutral_ms);
    assertEquals(round1.windowMs("i want apples bananas and pears", list.at(-1)), d.neutral_ms);
    // Complete words that fall: the pause that revealed them is enough.
    const ask = await cuesAtPauses("could you send me the bill, by email.", band);
    assertEquals(
      policy.windowMs("could you send me the bill by email", ask.at(-1)),
      DEFAULT_END_OF_TURN_BOUNDS.confirmedMinMs,
    );
    // A number ending is not confirmed by a fall (numbers are read out a group at a time).
    assertEquals(policy.windowMs("a table for four", ask.at(-1)), d.complete_ms);
    // At the comma the words look complete but the voice did not fall: today's window stays.
    assertEquals(policy.windowMs("could you send me the bill", ask[0]), d.complete_ms);
  });
}

for (const band of ["16k", "8k"] as const) {
  Deno.test(`${band}: a number read out in groups waits at each group and not at its end`, async () => {
    const policy = new EndOfTurnPolicy("en");
    const d = endOfTurnDefaults("en");
    const cues = await cuesAtPauses(
      "my number is nine eight four, five two one, two three four seven.",
      band,
    );
    assertEquals(cues.length, 3, JSON.stringify(cues));
    // The second group's voice is left up in the caller's range: the number goes on. (The
    // first group is read against its own start, "my number is" said higher: the bench's
    // figures include the cut that costs, docs/turn-taking.md.)
    assert(!cues[1].lowEnd, `second group: ${JSON.stringify(cues[1])}`);
    const twoGroups = "my number is nine eight four five two one";
    // Six digits after "my number is": a phone number goes on to ten, whatever the voice says.
    assertEquals(policy.windowMs(twoGroups, cues[1]), d.hesitant_ms);
    // Without the phone rule the voice alone still holds the group longer than a neutral pause.
    const byVoice = Object.assign(new EndOfTurnPolicy("en"), { phoneNumbers: false });
    assertEquals(byVoice.windowMs(twoGroups, cues[1]), Math.round(d.neutral_ms * 1.3));
    // The last group ends low: the number's usual window, not the pause alone (numbers never are).
    assert(cues[2].lowEnd, JSON.stringify(cues[2]));
    assertEquals(
      policy.windowMs("my number is nine eight four five two one two three four seven", cues[2]),
      d.complete_ms,
    );
    // Without the rule (round 1) every group looked complete and got the short window.
    const round1 = Object.assign(new EndOfTurnPolicy("en"), {
      numberGroups: false,
      phoneNumbers: false,
    });
    assertEquals(round1.windowMs(twoGroups, cues[1]), d.complete_ms);
  });
}

Deno.test("silence alone gives no cues, and without cues the words decide as before", () => {
  const track = new ProsodyTrack();
  track.push(new Int16Array(16000));
  const cues = track.cuesAt(1000);
  assertEquals([cues.pitch, cues.finalFall, cues.held], ["unknown", false, false]);
  const policy = new EndOfTurnPolicy("en");
  for (const text of ["what time is it", "i would like to check my order", "and um"]) {
    assertEquals(policy.windowMs(text, cues), policy.windowMs(text));
  }
});

Deno.test("a complete question with a rising or level voice keeps its window", () => {
  const policy = new EndOfTurnPolicy("en");
  const level: ProsodyCues = { pitch: "level", finalFall: false, lowEnd: false, held: false };
  assertEquals(policy.windowMs("what time is it", level), endOfTurnDefaults("en").complete_ms);
});
