// What the outbound side pulls from every 20 ms: the speaker of a conversation, the echo, or
// nothing. Kept apart from the call so a stage (media/speech) need not know media/call.

/** Something that can give the next 20 ms of 48 kHz mono PCM, or nothing (silence). */
export interface FrameSource {
  /**
   * The next frame (960 samples), or undefined for silence. The caller uses it synchronously:
   * a source may reuse the returned array once next() is called again.
   */
  next(now?: number): Int16Array | undefined;

  /**
   * The next 20 ms as an Opus packet of exactly 960 samples, sent as it is (no encoding: the
   * echo hands back the caller's own packets). Valid until the next call: a source may reuse
   * its buffer then. Undefined means this 20 ms is not a packet: the reader then asks next()
   * for PCM (or silence), so a source may move from packets to PCM mid-stream. A reader that
   * needs PCM (a tap such as the recording) never calls it, and then hears only what next()
   * gives.
   */
  nextPacket?(now?: number): Uint8Array | undefined;
}
