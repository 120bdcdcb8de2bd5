// A whole phone call through a telephony provider's media stream, for tests: the API and a worker
// in this process (the local engines), a brain served by the SDK that records what it is told,
// the FAKE provider (tests/fakes/) placing the call through the service's webhook, and the FAKE
// REST API the worker hangs up and transfers through.
import { createBrain, type Dtmf, type Session } from "../../sdk/brain/mod.ts";
import { loadTelephonySettings } from "../../common/telephony_settings.ts";
import { readWav, rms } from "../../caller/wav.ts";
import { callerSpeechWav } from "./audio.ts";
import { type InProcessCallService, startInProcessCallService } from "./call_harness.ts";
import type { FakeProviderStream } from "../fakes/provider_media_stream.ts";
import { dialThroughFakeTwilio, twilioCall } from "../fakes/twilio_media_stream.ts";
import { dialThroughFakePlivo, plivoCall } from "../fakes/plivo_audio_stream.ts";
import { dialThroughFakeExotel, exotelCall } from "../fakes/exotel_voicebot_stream.ts";
import { type FakeTelephonyRest, startFakeTelephonyRest } from "../fakes/telephony_rest.ts";

export const TWILIO = { accountSid: "AC0123456789abcdef0123456789abcdef", authToken: "tw-token" };
export const PLIVO = { authId: "MAXXXXXXXXXXXXXXXXXX", authToken: "pl-token" };
export const EXOTEL_SECRET = "ex-secret";

export const GREETING = "Hello, you are through to the test line.";
export const STORY = "Once upon a time there was a lighthouse keeper who counted every wave " +
  "that broke on the rocks below, one by one, through the long grey winter, and in the spring " +
  "he wrote each number down in a book that grew and grew until it filled the whole tower.";

/** What the brain was told during the call. */
export interface BrainSide {
  sessions: Session[];
  turns: string[];
  digits: Dtmf[];
}

export type Provider = "twilio" | "plivo" | "exotel";

export interface StreamCallRig {
  service: InProcessCallService;
  rest: FakeTelephonyRest;
  brain: BrainSide;
  /** Places a call through `provider`'s webhook; resolves once its stream is open. */
  dial(provider: Provider): Promise<{
    stream: FakeProviderStream;
    callId: string;
    /** Messages the worker sent that break the provider's rules (Exotel's chunk sizes). */
    offProtocol: () => number;
  }>;
  close(): Promise<void>;
}

/**
 * The brain: greets, answers the first turn with what it heard and later ones with a story, ends the
 * call on "#" and transfers it on "0".
 */
export async function startStreamCallRig(
  options: {
    reply?: (text: string, turn: number) => string;
    /** PLIVO_STREAM_CONTENT_TYPE (default μ-law at 8 kHz). */
    plivoContentType?: string;
  } = {},
): Promise<StreamCallRig> {
  const brain: BrainSide = { sessions: [], turns: [], digits: [] };
  const served = createBrain({
    onSessionStart: (s) => {
      brain.sessions.push(s);
      return GREETING;
    },
    async *onTurn(turn) {
      brain.turns.push(turn.text);
      if (options.reply) {
        yield options.reply(turn.text, brain.turns.length);
        return;
      }
      // The second turn on is answered with the story (8 kHz recognition need not catch "story").
      if (brain.turns.length >= 2) yield STORY;
      else yield `You said ${turn.text}.`;
    },
    onDtmf: (d, session) => {
      brain.digits.push(d);
      if (d.digit === "#") session.end("caller_pressed_hash");
      if (d.digit === "0") session.transfer("+14155550123");
    },
  });
  const rest = startFakeTelephonyRest({ twilio: TWILIO, plivo: PLIVO });
  const telephony = loadTelephonySettings({
    TWILIO_ACCOUNT_SID: TWILIO.accountSid,
    TWILIO_AUTH_TOKEN: TWILIO.authToken,
    TWILIO_API_URL: rest.url,
    PLIVO_AUTH_ID: PLIVO.authId,
    PLIVO_AUTH_TOKEN: PLIVO.authToken,
    PLIVO_API_URL: rest.url,
    EXOTEL_WEBHOOK_SECRET: EXOTEL_SECRET,
    PLIVO_STREAM_CONTENT_TYPE: options.plivoContentType,
  });
  const service = await startInProcessCallService(served, { telephony });
  // The address Plivo fetches a transfer's XML from (the worker signs links to it): this API's.
  telephony.publicApiUrl = service.api.url;
  const streams = new Map<string, FakeProviderStream>();
  // The provider ends a call's stream once its API hung the call up or redirected it.
  rest.onCallEnded = (callId) => void streams.get(callId)?.hangUp();
  const hook = (p: Provider) =>
    `${service.api.url}/api/v1/telephony/${p}/${service.tenant.agent_id}`;
  return {
    service,
    rest,
    brain,
    async dial(provider) {
      let stream: FakeProviderStream, callId: string;
      let offProtocol = () => 0;
      if (provider === "twilio") {
        const call = twilioCall(TWILIO.accountSid);
        callId = call.callSid;
        rest.calls.add(callId);
        stream = await dialThroughFakeTwilio(hook("twilio"), TWILIO.authToken, call);
      } else if (provider === "plivo") {
        const call = plivoCall();
        callId = call.callUuid;
        rest.calls.add(callId);
        stream = await dialThroughFakePlivo(hook("plivo"), PLIVO.authToken, call);
      } else {
        const call = exotelCall();
        callId = call.callSid;
        const dialled = await dialThroughFakeExotel(hook("exotel"), EXOTEL_SECRET, call);
        stream = dialled.stream;
        offProtocol = () => dialled.wire.badChunks;
      }
      streams.set(callId, stream);
      return { stream, callId, offProtocol };
    },
    async close() {
      for (const s of streams.values()) await s.hangUp().catch(() => {});
      await service.close();
      await rest.close();
    },
  };
}

/** `text` spoken by festival at 8 kHz, as a phone carries it (or at `rate`, for a wideband leg). */
export async function phoneSpeech(text: string, rate = 8000): Promise<Int16Array> {
  return (await readWav(await callerSpeechWav(text, 0.3, rate))).samples;
}

/** Resolves once `check` holds (polled every 50 ms); fails with `what` after `ms`. */
export async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Loud 20 ms pieces of bot audio (at the stream's rate) received after `since`. */
export function loudFrames(stream: FakeProviderStream, since = 0, level = 300): number {
  const pcm = stream.botAudio(since);
  const frame = 20 * stream.perMs;
  let n = 0;
  for (let at = 0; at + frame <= pcm.length; at += frame) if (rms(pcm, at, at + frame) > level) n++;
  return n;
}
