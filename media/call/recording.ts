// The call's audio as a standard file: a 16-bit PCM WAV, 16 kHz, two channels (left the caller,
// right the bot), streamed to disk as the call goes so a long call costs no memory. Both
// channels advance on the outbound 20 ms grid, so they stay aligned.
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";

export const RECORDING_RATE = 16000;
const FRAME = RECORDING_RATE / 50; // 320 samples per 20 ms
const HEADER_BYTES = 44;

function header(dataBytes: number): Uint8Array {
  const b = new Uint8Array(HEADER_BYTES);
  const v = new DataView(b.buffer);
  const ascii = (o: number, s: string) => [...s].forEach((ch, i) => (b[o + i] = ch.charCodeAt(0)));
  ascii(0, "RIFF");
  v.setUint32(4, 36 + dataBytes, true);
  ascii(8, "WAVE");
  ascii(12, "fmt ");
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true); // PCM
  v.setUint16(22, 2, true); // channels
  v.setUint32(24, RECORDING_RATE, true);
  v.setUint32(28, RECORDING_RATE * 4, true); // byte rate
  v.setUint16(32, 4, true); // block align
  v.setUint16(34, 16, true);
  ascii(36, "data");
  v.setUint32(40, dataBytes, true);
  return b;
}

/** The file:// URL of a recording written at `path` (relative paths resolve from the cwd). */
export function recordingUrl(path: string): string {
  return pathToFileURL(path).href;
}

export class CallRecording {
  private file?: Deno.FsFile;
  private opening: Promise<void>;
  private buffered: Uint8Array[] = [];
  private bufferedBytes = 0;
  private dataBytes = 0;
  private caller: Int16Array[] = [];
  private writing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(readonly path: string) {
    this.opening = (async () => {
      await Deno.mkdir(dirname(path), { recursive: true });
      this.file = await Deno.open(path, { write: true, create: true, truncate: true });
      await this.file.write(header(0));
    })();
  }

  /** Where the recording is, as the session record names it. */
  get url(): string {
    return recordingUrl(this.path);
  }

  /** One 20 ms frame of the caller, decoded at 16 kHz (copied: decoders reuse buffers). */
  pushCaller(pcm16k: Int16Array): void {
    if (this.closed) return;
    this.caller.push(pcm16k.slice(0, FRAME));
    // A caller whose packets arrive in bursts must not make the channel drift ahead.
    if (this.caller.length > 10) this.caller.splice(0, this.caller.length - 10);
  }

  /** One outbound tick: the bot's 48 kHz frame (undefined = silence) and the caller's next frame. */
  tick(bot48k: Int16Array | undefined): void {
    if (this.closed) return;
    const caller = this.caller.shift();
    const out = new Int16Array(FRAME * 2);
    for (let i = 0; i < FRAME; i++) {
      out[2 * i] = caller ? caller[i] ?? 0 : 0;
      // 48 kHz → 16 kHz: the mean of three samples, a box low-pass before decimation.
      out[2 * i + 1] = bot48k
        ? Math.round((bot48k[3 * i] + bot48k[3 * i + 1] + bot48k[3 * i + 2]) / 3)
        : 0;
    }
    const bytes = new Uint8Array(out.buffer);
    this.buffered.push(bytes);
    this.bufferedBytes += bytes.length;
    if (this.bufferedBytes >= 64 * 1024) this.write();
  }

  private write(): void {
    const chunks = this.buffered;
    const size = this.bufferedBytes;
    this.buffered = [];
    this.bufferedBytes = 0;
    this.dataBytes += size;
    this.writing = this.writing.then(async () => {
      await this.opening;
      const all = new Uint8Array(size);
      let o = 0;
      for (const c of chunks) {
        all.set(c, o);
        o += c.length;
      }
      let done = 0;
      while (done < all.length) done += await this.file!.write(all.subarray(done));
    });
  }

  /** Writes what is left and the final sizes; returns the seconds recorded. */
  async close(): Promise<number> {
    if (this.closed) return this.dataBytes / (RECORDING_RATE * 4);
    this.closed = true;
    this.write();
    await this.writing;
    await this.opening;
    await this.file!.seek(0, Deno.SeekMode.Start);
    await this.file!.write(header(this.dataBytes));
    this.file!.close();
    return this.dataBytes / (RECORDING_RATE * 4);
  }
}
