// Frames are logged by their type as decoded off the wire, which the type checker cannot see: a
// frame the protocol gains (brain.proto) must be declared as a session event of its direction, or
// the worker would log a kind nothing declares. Read from the protocol itself, not a copy.
import { assertEquals } from "../tests/helpers/assert.ts";
import { BrainFrameType, ServiceFrameType } from "../proto/mod.ts";
import { SESSION_EVENTS } from "./session_event_meanings.ts";

/** The frame types a direction's oneof holds. */
const frameTypes = (type: typeof BrainFrameType) => type.oneofs.frame.oneof.toSorted();

/** Kinds the worker logs for what it could not take as a frame (not frame types). */
const NOT_FRAMES = ["text_frame", "undecodable", "frame_too_large", "bad_frame"];

Deno.test("every frame the worker sends the brain is a declared to_brain event", () => {
  assertEquals(Object.keys(SESSION_EVENTS.to_brain).toSorted(), frameTypes(ServiceFrameType));
});

Deno.test("every frame the brain sends is a declared from_brain event", () => {
  const kinds = Object.keys(SESSION_EVENTS.from_brain).filter((k) => !NOT_FRAMES.includes(k));
  assertEquals(kinds.toSorted(), frameTypes(BrainFrameType));
});
