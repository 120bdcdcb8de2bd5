/// <reference lib="dom" />
// The demo page: voice and language pickers, call and hang-up, the live conversation with what
// the caller heard, a box to type a turn instead of speaking it, who is speaking, the brain's
// actions and a box to message the brain. Its state is on `window.callPage` for tests.
//
// Configuration comes from `globalThis.CALL_CONFIG` (set by demo-config.js or an embedding page)
// or the query string:
//   index.html?api=http://127.0.0.1:8787&key=pk_...&agent=ag_...[&autostart=1]
import { type CallConfig, VoiceCall } from "./call.ts";
import { Conversation } from "./conversation.ts";
import { EnergyMeter } from "./meter.ts";
import { describeEnd } from "./end_reason.ts";
import { describeRefusal, describeUnreachable, type RefusalText } from "./refusal.ts";
import { LatencyLog, LatencyProbe } from "./latency.ts";
import {
  fillSelect,
  PHASE_WORDS,
  renderActions,
  renderConversation,
  renderLatency,
  renderSpeaking,
} from "./view.ts";
import {
  type Capabilities,
  choiceConfig,
  defaultChoice,
  fetchCapabilities,
  pickerOptions,
  settleChoice,
  type VoiceChoice,
} from "./voice_choice.ts";

declare global {
  var CALL_CONFIG: Partial<CallConfig> | undefined;
  var callPage: CallPage;
}

export interface CallPage {
  config: CallConfig;
  call?: VoiceCall;
  /** What the page shows of the current (or last) call. */
  conversation: Conversation;
  /** The capabilities the pickers were filled from; undefined until read, or if unreadable. */
  capabilities?: Capabilities;
  capabilitiesError?: string;
  /** Resolves once the pickers are filled (or capabilities could not be read). */
  ready: Promise<void>;
  botMeter?: EnergyMeter;
  micMeter?: EnergyMeter;
  /** End of the caller's speech to the bot's first audio, per turn, as this page heard it. */
  latency: LatencyLog;
  latencyProbe?: LatencyProbe;
  choice(): VoiceChoice | undefined;
  start(): Promise<void>;
  hangUp(): Promise<void>;
  sendClientMessage(t: string, d?: unknown): void;
  /** A typed turn (the client's sendText); the transcript shows it as typed. */
  sendText(content: string): Promise<void>;
}

function readConfig(): CallConfig {
  const q = new URLSearchParams(location.search);
  const given = globalThis.CALL_CONFIG ?? {};
  return {
    apiUrl: given.apiUrl ?? q.get("api") ?? location.origin,
    publishableKey: given.publishableKey ?? q.get("key") ?? "",
    agentId: given.agentId ?? q.get("agent") ?? "",
    connectBody: given.connectBody,
  };
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const callButton = $<HTMLButtonElement>("call");
const hangUpButton = $<HTMLButtonElement>("hangup");
const sendButton = $<HTMLButtonElement>("msg-send");
const typedButton = $<HTMLButtonElement>("typed-send");
const pickers = {
  voice: $<HTMLSelectElement>("voice"),
  tts: $<HTMLSelectElement>("tts-language"),
  stt: $<HTMLSelectElement>("stt-language"),
};
let audioContext: AudioContext | undefined;

function render(): void {
  const c = page.conversation;
  renderConversation(c, $("conversation"));
  renderSpeaking(c, $("speaking-user"), $("speaking-bot"));
  renderActions(c, $("actions"));
  renderLatency(page.latency, $("latency"), $("latency-median"));
}

/** "ping" → "ping"; '{"a":1}' → {a: 1}; "" → undefined. */
function parseData(text: string): unknown {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function fillPickers(caps: Capabilities, choice: VoiceChoice): void {
  const options = pickerOptions(caps, choice);
  fillSelect(pickers.voice, options.voice, choice.voice);
  fillSelect(pickers.tts, options.tts, choice.ttsLanguage);
  fillSelect(pickers.stt, options.stt, choice.sttLanguage);
}

async function loadPickers(): Promise<void> {
  try {
    const caps = await fetchCapabilities(page.config.apiUrl);
    fillPickers(caps, defaultChoice(caps));
    page.capabilities = caps;
    // The voices follow the speaking language and its label follows the voice: refill on change.
    for (const p of Object.values(pickers)) {
      p.addEventListener("change", () => fillPickers(caps, settleChoice(caps, page.choice()!)));
    }
  } catch (err) {
    // The call still works on the agent's own voice and language.
    page.capabilitiesError = String(err);
    const note = $("caps-note");
    note.textContent = `Voices and languages could not be read (${err}); ` +
      "calls use the agent's own.";
    note.hidden = false;
  }
}

/** Why the call was refused and what to do, or nothing. */
function showRefusal(text: RefusalText | undefined): void {
  $("refusal-said").textContent = text?.said ?? "";
  $("refusal-todo").textContent = text ? `What to do: ${text.todo}` : "";
  $("refusal").hidden = !text;
}

const page: CallPage = {
  config: readConfig(),
  conversation: new Conversation(),
  latency: new LatencyLog(),
  ready: Promise.resolve(),
  choice() {
    if (!page.capabilities) return undefined;
    return {
      voice: pickers.voice.value,
      ttsLanguage: pickers.tts.value,
      sttLanguage: pickers.stt.value,
    };
  },
  async start() {
    callButton.disabled = true;
    // Created on the click so browsers that require a gesture let it run.
    audioContext ??= new AudioContext();
    await audioContext.resume();
    const ctx = audioContext;
    page.conversation = new Conversation();
    page.latency = new LatencyLog();
    page.latencyProbe?.stop();
    page.latencyProbe = undefined;
    render();
    $("session-id").textContent = "–";
    $("end-reason").hidden = true;
    const choice = page.choice();
    const config: CallConfig = choice
      ? {
        ...page.config,
        connectBody: { ...page.config.connectBody, config: choiceConfig(choice) },
      }
      : page.config;
    const conv = () => page.conversation;
    // The latency probe starts once both tracks are there (the bot's arrives with its RTP).
    const tracks: { mic?: MediaStreamTrack; bot?: MediaStreamTrack } = {};
    const probe = () => {
      if (!tracks.mic || !tracks.bot) return;
      page.latencyProbe?.stop();
      const log = page.latency;
      page.latencyProbe = new LatencyProbe(ctx, tracks.mic, tracks.bot, (t) => {
        const entry = log.spoken(t, conv().lastSpoken(true));
        render();
        void page.call?.reportLatency(t.ms).then((kept) => {
          entry.recorded = kept;
          render();
        });
      }, (o) => (log.typed(o), render()));
    };
    page.call = new VoiceCall(config, $<HTMLAudioElement>("bot-audio"), {
      onChange: (state) => {
        $("phase").textContent = PHASE_WORDS[state.phase];
        $("phase").dataset.phase = state.phase;
        showRefusal(
          state.refusal
            ? describeRefusal(state.refusal, location.origin)
            : state.unreachable
            ? describeUnreachable(page.config.apiUrl, state.unreachable)
            : undefined,
        );
        const ended = $("end-reason");
        ended.textContent = describeEnd(state.end);
        ended.hidden = !state.end;
        $("session-id").textContent = state.sessionId ?? "–";
        $("log").textContent = state.log.join("\n");
        const live = state.phase === "ready" || state.phase === "connecting";
        hangUpButton.disabled = !live;
        sendButton.disabled = state.phase !== "ready";
        typedButton.disabled = state.phase !== "ready";
        callButton.disabled = !["idle", "refused", "ended", "failed"].includes(state.phase);
        for (const p of Object.values(pickers)) p.disabled = live || !page.capabilities;
      },
      onBotAudio: (track) => {
        page.botMeter?.stop();
        page.botMeter = new EnergyMeter(ctx, track);
        tracks.bot = track;
        probe();
      },
      onMicAudio: (track) => {
        page.micMeter?.stop();
        page.micMeter = new EnergyMeter(ctx, track);
        tracks.mic = track;
        probe();
      },
      onUserTranscript: (d) => (conv().userTranscript(d), render()),
      onBotOutput: (d) => (conv().botOutput(d), render()),
      onSpeaking: (who, on) => (conv().speakingChanged(who, on), render()),
      onServerMessage: (d) => (conv().serverMessage(d), render()),
    });
    await page.call.start();
  },
  async hangUp() {
    page.latencyProbe?.stop();
    await page.call?.hangUp();
  },
  sendClientMessage(t, d) {
    page.call?.sendClientMessage(t, d);
  },
  async sendText(content) {
    if (!page.call || !content.trim()) return;
    page.conversation.typed(content);
    page.latencyProbe?.typedSent(content.trim());
    await page.call.sendText(content);
  },
};
globalThis.callPage = page;
page.ready = loadPickers();

callButton.addEventListener("click", () => void page.start());
hangUpButton.addEventListener("click", () => void page.hangUp());
$<HTMLFormElement>("message").addEventListener("submit", (e) => {
  e.preventDefault();
  const t = $<HTMLInputElement>("msg-type").value.trim();
  if (t) page.sendClientMessage(t, parseData($<HTMLInputElement>("msg-data").value));
});
$<HTMLFormElement>("typed").addEventListener("submit", (e) => {
  e.preventDefault();
  const box = $<HTMLInputElement>("typed-text");
  const text = box.value;
  box.value = "";
  void page.sendText(text).catch((err) => {
    box.value = text; // not sent: the caller keeps what they typed
    page.call?.state.log.push(`typed text not sent: ${err}`);
  });
});
setInterval(() => {
  $<HTMLMeterElement>("bot-level").value = page.botMeter?.level ?? 0;
  $<HTMLMeterElement>("mic-level").value = page.micMeter?.level ?? 0;
}, 100);

if (new URLSearchParams(location.search).get("autostart") === "1") {
  void page.ready.then(() => page.start());
}
