// The lossy link lives with the caller (the simulator takes --loss/--jitter); tests import it here.
export * from "../../caller/lossy_link.ts";
