// The caller's voice for text turns: festival's text2wave where installed, because the local
// recogniser (pocketsphinx en-us) hears its diphone voice far better than espeak-ng's formant one
// (5 % against 65 % word error rate, media/stt/README.md). English only: festival has no other
// voice here, so other languages keep espeak-ng.
import { readWav, to48k } from "./wav.ts";

export const TEXT2WAVE = "text2wave";

/** Whether text2wave runs on this machine. */
export async function festivalInstalled(): Promise<boolean> {
  try {
    const out = await new Deno.Command(TEXT2WAVE, {
      args: ["-h"],
      stdout: "null",
      stderr: "null",
    }).output();
    return out.code === 0 || out.code === 1;
  } catch {
    return false;
  }
}

/** `text` spoken by festival, as 48 kHz mono PCM. */
export async function festivalSpeech(text: string): Promise<Int16Array> {
  const dir = await Deno.makeTempDir({ prefix: "caller-festival-" });
  try {
    const txt = `${dir}/text.txt`, wav = `${dir}/speech.wav`;
    await Deno.writeTextFile(txt, text);
    const out = await new Deno.Command(TEXT2WAVE, {
      args: ["-o", wav, txt],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!out.success) {
      throw new Error(`text2wave failed: ${new TextDecoder().decode(out.stderr).slice(0, 300)}`);
    }
    return to48k(await readWav(wav));
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
