// What the outbound side pulls from every 20 ms: the speaker of a conversation, the echo, or
// nothing. Kept apart from the call so a stage (media/speech) need not know media/call.

/** Something that can give the next 20 ms of 48 kHz mono PCM, or nothing (silence). */
export interface FrameSource {
  /**
   * The next frame (960 samples), or undefined for silence. The caller uses it synchronously:
   * a source may reuse the returned array once next() is called again.
   */
  next(now?: number): Int16Array | undefined;
}
