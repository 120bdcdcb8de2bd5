// What each declared session event means, in one line: the console shows it on the log's Kind
// column and docs/session-record.md lists it (checked by common/session_events_are_documented.test.ts).
// Typed over the declared events, so a kind declared without a meaning, or a meaning for a kind
// not declared, fails `deno check`.
import type { SessionEventKind, SessionSource } from "./session_events.ts";

export type SessionEventMeanings = { [S in SessionSource]: Record<SessionEventKind<S>, string> };

const FRAME = "the frame as sent, decoded (brain.proto), with its seq";
const BRAIN_FRAME = "the frame as received, decoded (brain.proto), with its seq and timestamp_ms";
const FAILED = "the call failed: { detail }, and brain_url for a brain failure";

export const SESSION_EVENTS: SessionEventMeanings = {
  worker: {
    offer_accepted: "the page's WebRTC offer was answered { pc_id }",
    peer_restarted: "the page negotiated again (ICE restart) { pc_id }",
    dtls_connected: "the transport is up, by the peer's state or the chat channel opening { by }",
    call_started:
      "the call began: { about } from the page's client-ready, or the phone line's { carrier, from, to, call_id }",
    typed_text: "a typed turn's text as taken, before it becomes a turn { text }",
    speech_started: "the VAD heard the caller start { onset_ms, at_ms }",
    speech_stopped:
      "the caller stopped: { at_ms, speech_ms } from the VAD, or { silence_ms, window_ms, words } at the end of an utterance",
    final_text: "the recogniser's final words for an utterance { text, audio_ms, engine }",
    barge_in: "the caller cut the bot off { turn_id } with the VAD's window_ms, or typed: true",
    turn_cancelled: "a turn the brain was answering was superseded { turn_id, reason }",
    turn_speculative:
      "the caller paused: their words went to the brain as a speculative turn, its reply held { turn_id }",
    turn_confirmed:
      "the speculative turn's window closed on its words: its held reply plays { turn_id, units } (units: held so far)",
    speculation_dropped:
      "the caller went on: the speculative turn was cancelled, its reply dropped unheard { turn_id, units }",
    greeting_timeout: "no greeting unit in time { after_ms }",
    greeting_released:
      "an outbound call's held greeting was spoken: the callee spoke, stayed silent, or the delay passed { why, waited_ms }",
    machine_detected:
      "an outbound call's answering-machine detection decided { outcome, at_ms, why }, at_ms from the answer",
    beep:
      "after a machine: its beep ended { at_ms, heard: true, hz }, or none is coming { heard: false, why }",
    reply_timeout: "no first unit of a reply in time { turn_id, after_ms }",
    engine_fallback:
      "an engine gave up and the next of its route took over { leg, from, to, reason }",
    synthesis_error: "a unit could not be synthesized { unit_id, error }",
    unit_refused:
      "a unit refused: the speech queue was full { turn_id, unit_id, reason, queued_units, queued_chars }",
    unit_dropped: "a unit not spoken, and why { turn_id, unit_id, reason }",
    bot_paused: "a short sound over the bot paused it { turn_id, window_ms }",
    bot_resumed: "the bot went on after a pause { turn_id, text }",
    config_applied: "the brain's Config took effect { changed, config }",
    config_refused: "the brain's Config was refused { fields, config } or { error }",
    end_requested: "the brain asked to end the call { reason }",
    transfer_requested:
      "the brain asked for a transfer { target, warm } (a warm one has a whisper)",
    transfer_refused: "a transfer the call cannot make { target, detail }",
    transferred: "the call was transferred { target, detail }",
    transfer_failed: "a transfer the line tried failed { target, detail, reason }",
    brain_silent: "the brain has sent nothing, pings unanswered { silent_ms }",
    brain_back: "the brain sent something again after brain_silent { silent_ms }",
    caller_audio: "the caller's packets over the call: received, lost, late, jitter_ms, ...",
    last_messages: "the last chat messages' delivery at the end { delivered, ms }",
    recording_written: "the recording was closed { url, seconds }",
    recording_stored:
      "the recording and its transcript are in the agent's bucket { url, wav_key, json_key, bytes, attempts }",
    recording_upload_failed:
      "an upload to the agent's bucket failed; kept locally and retried { error, attempts, retry_in_seconds }",
    echo_cancellation: "the call's echo cancellation { setting, on } ([echo.md](echo.md))",
    echo_unavailable: "libspeexdsp is missing: the call runs without cancelling { detail }",
    echo_cancelled: "at the end, what it did (zeros when off) { frames, realigned, gated }",
    call_ended: "the call ended { status, reason }",
    end_not_recorded:
      "the end could not be written to the session row (the database refused or was away)",
    log_events_dropped:
      "events dropped while the log waited for the database { count, by_source, first_at, last_at }",
    brain_unreachable: FAILED,
    brain_connect_timeout: FAILED,
    brain_disconnected: FAILED,
    brain_protocol_error: FAILED,
    brain_frame_too_large: FAILED,
    brain_unresponsive: FAILED,
    engine_unavailable: FAILED,
    recognition_failed: FAILED,
    synthesis_failed: FAILED,
    vad_failed: FAILED,
  },
  page: {
    chat: "a chat frame from the page: its text, or { refused, chars, excerpt }",
    client_latency:
      "the page's own end of speech to first audio { turn_id?, end_of_speech_to_audio_ms }",
    "client-message": "an RTVI client-message for the brain: its data",
    "ui-event": "an RTVI ui-event for the brain: its data",
  },
  to_page: {
    chat: "a chat frame to the page: its text",
  },
  phone: {
    "user-started-speaking": "the caller started speaking",
    "user-stopped-speaking": "the caller stopped speaking",
    "bot-started-speaking": "the bot started speaking",
    "bot-stopped-speaking": "the bot stopped speaking",
    "user-transcription": "the caller's final words { text, final, timestamp, user_id }",
    "bot-output": "a unit the bot finished speaking { text, spoken_status, spoken_progress, ... }",
    "server-message": "a brain action, or why the call ended { type, data }",
    error: "an error the page would have been shown { error, message, fatal }",
    dtmf: 'a key the caller pressed { digit ("*" while sensitive), duration_ms, via ("tone") }',
    dtmf_dropped: "key presses dropped over the rate { count, total, limit_per_second }",
    transfer: "the line was asked to transfer the call { target, warm }",
    hang_up_failed: "hanging up the line failed { detail }",
    line: "the line's counts at the end",
  },
  sip: {
    invite: "the INVITE as admitted { from, to, call_id }",
    answered: "the 200 OK was sent { codec, dtmf_payload_type, remote }",
    confirmed: "the caller's ACK came",
    media: "a re-INVITE changed the media (hold) { direction, codec }",
    info_dtmf: "a key sent by SIP INFO (its digit is the phone dtmf entry's) { duration_ms }",
    refer: "a REFER was sent { refer_to }",
    refer_outcome: "what came of the REFER { ok, detail }",
    bye: "the worker hung up (BYE sent)",
    bye_answered: "the answer to the BYE { answer }",
    media_timeout: "no RTP from the caller for too long",
    ended: "the far end ended the call { reason }",
    dial:
      "the worker sent an outbound INVITE { to, from, trunk_id, ring_timeout_seconds, machine_detection, call_id }",
    ringing: "the callee's phone rang (the first 180 or 183)",
    dial_ended: "the outbound call ended unanswered { reason, sip }",
    hold: "a warm transfer put the caller on hold, or took them off it { on }",
    warm_dial:
      "a warm transfer's INVITE to the person was sent { target, uri, call_id, ring_timeout_ms }",
    warm_ringing: "the person's phone rang (the first 180 or 183)",
    warm_leg: "the person's call's own line event { event } (bye, ended, media_timeout...)",
    warm_answered: "the person answered { codec, remote }",
    warm_failed: "the person's call ended unanswered { reason, sip }",
    whisper_played: "the whisper was played to the person { ms }",
    bridged:
      "the worker joined the caller and the person (the session ends transferred) { call_id }",
    bridge_ended: "the bridged call ended, after the session { by, bridged_ms }",
  },
  to_brain: {
    session_start: FRAME,
    user_turn: FRAME,
    client_message: FRAME,
    heard: FRAME,
    user_idle: FRAME,
    finalize: FRAME,
    end: FRAME,
    cancel: FRAME,
    dtmf: FRAME,
    transfer_failed: FRAME,
    say_started: FRAME,
    say_refused: FRAME,
    user_speech: FRAME,
    interim_text: FRAME,
    turn_metrics: FRAME,
    machine_detected: FRAME,
    beep: FRAME,
    turn_confirmed: FRAME,
  },
  from_brain: {
    greeting: BRAIN_FRAME,
    speech_unit: BRAIN_FRAME,
    action: BRAIN_FRAME,
    config: BRAIN_FRAME,
    end_session: BRAIN_FRAME,
    transfer: BRAIN_FRAME,
    say: BRAIN_FRAME,
    text_frame: "a text frame (frames are binary): its first 200 characters { text }",
    undecodable: "bytes that are not a frame { bytes }",
    frame_too_large: "a frame over the limit { bytes, limit }",
    bad_frame: "a frame the socket refused { error }",
  },
};

/** What a logged event means, or undefined for a kind no longer declared (an old record's). */
export function meaningOf(source: string, kind: string): string | undefined {
  const kinds = (SESSION_EVENTS as Record<string, Record<string, string> | undefined>)[source];
  return kinds && Object.hasOwn(kinds, kind) ? kinds[kind] : undefined;
}
