// Messages between the media worker and its recognition thread.
export type ToRecogniser =
  | { op: "start" }
  | { op: "open"; id: number }
  | { op: "push"; id: number; pcm: Int16Array }
  | { op: "finish"; id: number; seq: number }
  | { op: "close"; id: number };

export type FromRecogniser =
  | { op: "ready" }
  | { op: "opened"; id: number }
  | { op: "interim"; id: number; text: string }
  | { op: "final"; id: number; seq: number; text: string }
  | { op: "error"; id?: number; message: string };
