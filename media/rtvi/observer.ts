// What the page is told about the call, in one place (Pipecat's RTVIObserver): call events in,
// RTVI messages out. The call names what happened; the message shapes are declared with the
// session events (a phone call logs them: common/session_events.ts's RtviEvents).
import type { RtviEvents } from "../../common/session_events.ts";

export interface RtviEmitter {
  emit<T extends keyof RtviEvents>(type: T, data?: RtviEvents[T]): boolean;
}

export type SpokenStatus = RtviEvents["bot-output"]["spoken_status"];

export class RtviObserver {
  constructor(private rtvi: RtviEmitter, private clock: () => Date = () => new Date()) {}

  userStartedSpeaking(): void {
    this.rtvi.emit("user-started-speaking");
  }

  userStoppedSpeaking(): void {
    this.rtvi.emit("user-stopped-speaking");
  }

  /** Interim (final false) or final words of the caller. */
  userTranscription(text: string, final: boolean): void {
    this.rtvi.emit("user-transcription", {
      text,
      final,
      timestamp: this.clock().toISOString(),
      user_id: "",
    });
  }

  botStartedSpeaking(): void {
    this.rtvi.emit("bot-started-speaking");
  }

  botStoppedSpeaking(): void {
    this.rtvi.emit("bot-stopped-speaking");
  }

  /** A unit of the bot's speech: `heard` is what of `text` has been played so far. */
  botOutput(text: string, heard: string, status: SpokenStatus): void {
    this.rtvi.emit("bot-output", {
      text,
      aggregated_by: "sentence",
      will_be_spoken: true,
      spoken_status: status,
      spoken_progress: { accumulated_text: heard, remaining_text: text.slice(heard.length) },
    });
  }

  /** A brain action, for the page. */
  serverMessage(type: unknown, data: unknown): void {
    this.rtvi.emit("server-message", { type, data });
  }

  /** fatal: the call ends with it. */
  error(detail: string, fatal: boolean): void {
    this.rtvi.emit("error", { error: detail, message: detail, fatal });
  }
}
