// Messages between PocketsphinxEngine (media worker thread) and pocketsphinx_thread.ts.
import type { DecoderArgs } from "./pocketsphinx_ffi.ts";
import type { PoolOptions, RecogniserOptions } from "./pocketsphinx_decoding.ts";
import type { ChannelKind } from "./engine.ts";

export interface ThreadSettings extends RecogniserOptions, PoolOptions {
  args: DecoderArgs;
  /** Decode with the dictionary cut to the LM's words (lm_dictionary.ts). */
  lmWordsDictionary: boolean;
  /** With lmWordsDictionary: the LM's most probable words kept (0: all) and words always kept. */
  vocabulary: number;
  keepWords: string[];
}

/** A thread's decoders and the utterances that waited for one. */
export interface ThreadStats {
  idle: number;
  inUse: number;
  /** Decoders initialised since the thread started. */
  made: number;
  /** Utterances whose start found no spare decoder and waited for ps_init. */
  waited: number;
  /** Open calls (recognition streams) on the thread. */
  calls: number;
}

/** `utt` numbers a stream's utterances (those with audio) from 0, on both sides. */
export type ToThread =
  | { type: "init"; settings: ThreadSettings }
  | { type: "open"; id: number; channel: ChannelKind }
  | { type: "audio"; id: number; pcm: Int16Array }
  | { type: "finish"; id: number; utt: number }
  | { type: "close"; id: number }
  | { type: "stats"; req: number }
  | { type: "shutdown" }
  /** Test hook: the thread dies on this message, as on any uncaught exception. */
  | { type: "crash" };

export type FromThread =
  | { type: "ready"; initMs: number }
  /** `missing` is PocketsphinxMissingError's `what` when that was the failure, else null. */
  | { type: "init_error"; message: string; missing: string | null }
  | { type: "opened"; id: number; initMs: number }
  | { type: "interim"; id: number; utt: number; text: string }
  | { type: "final"; id: number; utt: number; text: string; decodeMs: number }
  | { type: "error"; id: number; message: string }
  | ({ type: "stats"; req: number } & ThreadStats)
  | { type: "bye" };
