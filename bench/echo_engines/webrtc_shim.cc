// A C face on WebRTC's audio processing module 0.3 (Debian's libwebrtc-audio-processing1), so
// bench/echo_engines.ts can call its echo canceller through Deno FFI beside SpeexDSP's. Built by
// that bench with g++ when run; the worker does not use it (docs/echo.md says why).
#include <webrtc/modules/audio_processing/include/audio_processing.h>
#include <cstdint>
#include <vector>

using webrtc::AudioProcessing;

struct Wap {
  AudioProcessing* apm;
  int rate;
};

extern "C" {

// rate: 16000; 10 ms chunks. Delay-agnostic and the extended filter: the line's delay is unknown.
void* wap_new(int rate) {
  webrtc::Config config;
  config.Set<webrtc::DelayAgnostic>(new webrtc::DelayAgnostic(true));
  config.Set<webrtc::ExtendedFilter>(new webrtc::ExtendedFilter(true));
  AudioProcessing* apm = AudioProcessing::Create(config);
  apm->echo_cancellation()->Enable(true);
  apm->echo_cancellation()->set_suppression_level(webrtc::EchoCancellation::kHighSuppression);
  return new Wap{apm, rate};
}

static void to_float(const int16_t* in, float* out, int n) {
  for (int i = 0; i < n; i++) out[i] = in[i] / 32768.0f;
}

// The bot's audio as sent: n = rate / 100 samples.
int wap_far(void* p, const int16_t* pcm, int n) {
  Wap* w = static_cast<Wap*>(p);
  std::vector<float> f(n);
  to_float(pcm, f.data(), n);
  const float* ch[1] = {f.data()};
  return w->apm->AnalyzeReverseStream(ch, n, w->rate, AudioProcessing::kMono);
}

// The caller's audio, echo taken out in place.
int wap_near(void* p, int16_t* pcm, int n) {
  Wap* w = static_cast<Wap*>(p);
  std::vector<float> f(n);
  to_float(pcm, f.data(), n);
  const float* src[1] = {f.data()};
  float* dst[1] = {f.data()};
  w->apm->set_stream_delay_ms(0);
  int r = w->apm->ProcessStream(src, n, w->rate, AudioProcessing::kMono, w->rate,
                                AudioProcessing::kMono, dst);
  for (int i = 0; i < n; i++) {
    float v = f[i] * 32768.0f;
    pcm[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : static_cast<int16_t>(v);
  }
  return r;
}

void wap_free(void* p) {
  Wap* w = static_cast<Wap*>(p);
  delete w->apm;
  delete w;
}
}
