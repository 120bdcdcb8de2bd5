/// <reference lib="dom" />
// The call page: wires a VoiceCall to the buttons, status and level meters in index.html, and
// exposes the call's state and audio energy on `window.callPage` for tests.
//
// Configuration comes from `globalThis.CALL_CONFIG` (set by an embedding page) or the query string:
//   index.html?api=http://127.0.0.1:8787&key=pk_...&agent=ag_...[&autostart=1]
import { type CallConfig, VoiceCall } from "./call.ts";
import { EnergyMeter } from "./meter.ts";

declare global {
  var CALL_CONFIG: Partial<CallConfig> | undefined;
  var callPage: CallPage;
}

export interface CallPage {
  config: CallConfig;
  call?: VoiceCall;
  botMeter?: EnergyMeter;
  micMeter?: EnergyMeter;
  start(): Promise<void>;
  hangUp(): Promise<void>;
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
let audioContext: AudioContext | undefined;

const page: CallPage = {
  config: readConfig(),
  async start() {
    callButton.disabled = true;
    // Created on the click so browsers that require a gesture let it run.
    audioContext ??= new AudioContext();
    await audioContext.resume();
    const ctx = audioContext;
    page.call = new VoiceCall(page.config, $<HTMLAudioElement>("bot-audio"), {
      onChange: (state) => {
        $("phase").textContent = state.phase;
        $("log").textContent = state.log.join("\n");
        hangUpButton.disabled = state.phase !== "ready" && state.phase !== "connecting";
        callButton.disabled = !["idle", "refused", "ended", "failed"].includes(state.phase);
      },
      onBotAudio: (track) => {
        page.botMeter?.stop();
        page.botMeter = new EnergyMeter(ctx, track);
      },
      onMicAudio: (track) => {
        page.micMeter?.stop();
        page.micMeter = new EnergyMeter(ctx, track);
      },
    });
    await page.call.start();
  },
  async hangUp() {
    await page.call?.hangUp();
  },
};
globalThis.callPage = page;

callButton.addEventListener("click", () => void page.start());
hangUpButton.addEventListener("click", () => void page.hangUp());
setInterval(() => {
  $<HTMLMeterElement>("bot-level").value = page.botMeter?.level ?? 0;
  $<HTMLMeterElement>("mic-level").value = page.micMeter?.level ?? 0;
}, 100);

if (new URLSearchParams(location.search).get("autostart") === "1") void page.start();
