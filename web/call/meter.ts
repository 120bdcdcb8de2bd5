/// <reference lib="dom" />
// Audio energy of a track over time: a WebAudio AnalyserNode sampled on an interval, as RMS of
// the time-domain signal (0 = silence, about 0.7 = full-scale sine). Pages use it for a level
// meter; tests read the samples to see that sound really arrived.

export interface EnergySample {
  /** Milliseconds since the page loaded (performance.now()). */
  t: number;
  rms: number;
}

export class EnergyMeter {
  /** Most recent samples, oldest first, at most `maxSamples`. */
  readonly samples: EnergySample[] = [];
  peak = 0;
  private timer: ReturnType<typeof setInterval>;
  private source: MediaStreamAudioSourceNode;
  private analyser: AnalyserNode;

  constructor(
    context: AudioContext,
    track: MediaStreamTrack,
    intervalMs = 50,
    private maxSamples = 2000,
  ) {
    this.source = context.createMediaStreamSource(new MediaStream([track]));
    this.analyser = context.createAnalyser();
    this.analyser.fftSize = 2048;
    this.source.connect(this.analyser); // an analyser needs no destination to be fed
    const buf = new Float32Array(this.analyser.fftSize);
    this.timer = setInterval(() => {
      this.analyser.getFloatTimeDomainData(buf);
      let sum = 0;
      for (const v of buf) sum += v * v;
      const rms = Math.sqrt(sum / buf.length);
      this.peak = Math.max(this.peak, rms);
      this.samples.push({ t: performance.now(), rms });
      if (this.samples.length > this.maxSamples) this.samples.shift();
    }, intervalMs);
  }

  get level(): number {
    return this.samples.at(-1)?.rms ?? 0;
  }

  stop(): void {
    clearInterval(this.timer);
    this.source.disconnect();
  }
}
