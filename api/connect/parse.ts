// sessions.connect body → a normalized request, or a refusal. Pure: no I/O, testable alone.
// Both request forms of the spec are read and may be mixed; they mean the same thing
// (decisions.md), and a field given in both forms with different values is refused.
import type { Capabilities } from "../../common/capabilities.ts";
import { ApiError, invalidRequest } from "../../common/http/errors.ts";
import {
  checkConfig,
  type ConfigJson,
  type ConfigLeaf,
  isPlainObject,
  readConfigLeaves,
} from "./config.ts";
import { isNoiseSuppression, NOISE_SUPPRESSION } from "../../common/noise_suppression.ts";
import { readLevel, SENSITIVITY_FIELDS } from "./sensitivity.ts";

export interface ConnectRequest {
  agent_id: string;
  /** The normalized agent input: signed into the token and stored on the session. */
  input: AgentInput;
}

export interface AgentInput {
  init: Record<string, unknown> | null;
  config: ConfigJson;
  record: boolean | null;
  display_name: string | null;
  metadata: Record<string, string>;
}

export const LIMITS = {
  bodyBytes: 64 * 1024,
  initBytes: 16 * 1024,
  displayNameChars: 200,
  metadataKeys: 10,
  metadataValueChars: 256,
};

const TOP_LEVEL = new Set([
  "agent_id",
  "agent_input",
  "record",
  "config",
  "init",
  "display_name",
  "metadata",
]);
const AGENT_INPUT = new Set(["payload", "pipeline"]);
const METADATA_KEY = /^[A-Za-z0-9_.-]{1,64}$/;

const chars = (s: string) => [...s].length; // code points, not UTF-16 units
const utf8Bytes = (s: string) => new TextEncoder().encode(s).length;

/** Stable JSON for comparing two JSON values regardless of key order. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (isPlainObject(v)) {
    return `{${
      Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")
    }}`;
  }
  return JSON.stringify(v);
}

function conflict(a: string, b: string): ApiError {
  return new ApiError(
    400,
    "conflicting_fields",
    `${a} and ${b} mean the same thing and were given different values.`,
    { fields: [a, b] },
  );
}

function optionalObject(v: unknown, path: string): Record<string, unknown> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isPlainObject(v)) throw invalidRequest(path, `${path} must be an object.`);
  return v;
}

function optionalBoolean(v: unknown, path: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw invalidRequest(path, `${path} must be true or false.`);
  return v;
}

/** Picks the one value of a field that both forms can carry, refusing disagreement. */
function oneOf<T>(
  a: { value: T | undefined; path: string },
  b: { value: T | undefined; path: string },
  same: (x: T, y: T) => boolean,
): T | undefined {
  if (a.value !== undefined && b.value !== undefined && !same(a.value, b.value)) {
    throw conflict(a.path, b.path);
  }
  return a.value ?? b.value;
}

/**
 * noise_suppression sits beside the Config sections (pipeline or config) but is not part of the
 * wire Config: it is decided once, at connect, and a brain cannot change it mid-call.
 */
function readNoiseSuppression(section: Record<string, unknown> | undefined, path: string) {
  const v = section?.noise_suppression;
  if (v === undefined || v === null) return undefined;
  const field = `${path}.noise_suppression`;
  if (typeof v !== "string") throw invalidRequest(field, `${field} must be a string.`);
  if (!isNoiseSuppression(v)) {
    throw new ApiError(
      400,
      "unsupported_config",
      `${field} is ${JSON.stringify(v)}, which this service does not serve.`,
      { field, allowed: [...NOISE_SUPPRESSION] },
    );
  }
  return v;
}

function mergeLeaves(a: ConfigLeaf[], b: ConfigLeaf[]): Map<string, ConfigLeaf> {
  const merged = new Map<string, ConfigLeaf>();
  for (const leaf of [...a, ...b]) {
    const prior = merged.get(leaf.key);
    if (prior && prior.value !== leaf.value) throw conflict(prior.path, leaf.path);
    if (!prior) merged.set(leaf.key, leaf);
  }
  return merged;
}

function readLabels(body: Record<string, unknown>) {
  let displayName: string | null = null;
  if (body.display_name !== undefined && body.display_name !== null) {
    if (typeof body.display_name !== "string") {
      throw invalidRequest("display_name", "display_name must be a string.");
    }
    if (chars(body.display_name) > LIMITS.displayNameChars) {
      throw new ApiError(
        400,
        "invalid_metadata",
        `display_name is longer than ${LIMITS.displayNameChars} characters.`,
        { field: "display_name" },
      );
    }
    displayName = body.display_name;
  }
  const metadata: Record<string, string> = {};
  const raw = optionalObject(body.metadata, "metadata");
  if (raw) {
    const entries = Object.entries(raw);
    if (entries.length > LIMITS.metadataKeys) {
      throw new ApiError(
        400,
        "invalid_metadata",
        `metadata has ${entries.length} keys; at most ${LIMITS.metadataKeys} are allowed.`,
        { field: "metadata" },
      );
    }
    for (const [k, v] of entries) {
      const path = `metadata.${k}`;
      if (!METADATA_KEY.test(k)) {
        throw new ApiError(
          400,
          "invalid_metadata",
          "metadata keys are 1 to 64 characters of letters, digits, '_', '.' and '-'.",
          { field: path },
        );
      }
      if (typeof v !== "string") {
        throw new ApiError(
          400,
          "invalid_metadata",
          `${path} must be a string (metadata is flat).`,
          {
            field: path,
          },
        );
      }
      if (chars(v) > LIMITS.metadataValueChars) {
        throw new ApiError(
          400,
          "invalid_metadata",
          `${path} is longer than ${LIMITS.metadataValueChars} characters.`,
          { field: path },
        );
      }
      metadata[k] = v;
    }
  }
  return { displayName, metadata };
}

/** Reads a parsed JSON body; throws ApiError on every refusal. */
export function parseConnectBody(body: unknown, caps: Capabilities): ConnectRequest {
  if (!isPlainObject(body)) throw invalidRequest("", "The request body must be a JSON object.");
  for (const key of Object.keys(body)) {
    if (!TOP_LEVEL.has(key)) throw invalidRequest(key, `${key} is not a known field.`);
  }
  if (typeof body.agent_id !== "string" || body.agent_id === "") {
    throw invalidRequest("agent_id", "agent_id is required and must be a non-empty string.");
  }

  const agentInput = optionalObject(body.agent_input, "agent_input") ?? {};
  for (const key of Object.keys(agentInput)) {
    if (!AGENT_INPUT.has(key)) {
      throw invalidRequest(`agent_input.${key}`, `agent_input.${key} is not a known field.`);
    }
  }
  const payload = optionalObject(agentInput.payload, "agent_input.payload");
  const init = optionalObject(body.init, "init");
  const config = optionalObject(body.config, "config");
  const record = oneOf(
    { value: optionalBoolean(body.record, "record"), path: "record" },
    { value: optionalBoolean(config?.record, "config.record"), path: "config.record" },
    (x, y) => x === y,
  );

  const pipeline = optionalObject(agentInput.pipeline, "agent_input.pipeline");
  const noise = oneOf(
    {
      value: readNoiseSuppression(pipeline, "agent_input.pipeline"),
      path: "agent_input.pipeline.noise_suppression",
    },
    { value: readNoiseSuppression(config, "config"), path: "config.noise_suppression" },
    (x, y) => x === y,
  );

  const fromPipeline: ConfigLeaf[] = [];
  readConfigLeaves(pipeline, "agent_input.pipeline", fromPipeline, undefined, "", [
    "noise_suppression",
    ...SENSITIVITY_FIELDS,
  ]);
  const fromConfig: ConfigLeaf[] = [];
  readConfigLeaves(config, "config", fromConfig, undefined, "", [
    "record",
    "noise_suppression",
    ...SENSITIVITY_FIELDS,
  ]);
  const mergedInit = oneOf(
    { value: payload, path: "agent_input.payload" },
    { value: init, path: "init" },
    (x, y) => canonical(x) === canonical(y),
  );
  const leaves = mergeLeaves(fromPipeline, fromConfig);

  const checked = checkConfig(leaves, caps);
  if (noise) checked.noise_suppression = noise;
  for (const name of SENSITIVITY_FIELDS) {
    const level = oneOf(
      {
        value: readLevel(pipeline, "agent_input.pipeline", name),
        path: `agent_input.pipeline.${name}`,
      },
      { value: readLevel(config, "config", name), path: `config.${name}` },
      (x, y) => x === y,
    );
    if (level) checked[name] = level;
  }
  const { displayName, metadata } = readLabels(body);
  if (mergedInit && utf8Bytes(JSON.stringify(mergedInit)) > LIMITS.initBytes) {
    throw new ApiError(400, "init_too_large", `init is larger than ${LIMITS.initBytes} bytes.`, {
      field: payload ? "agent_input.payload" : "init",
      limit_bytes: LIMITS.initBytes,
    });
  }
  return {
    agent_id: body.agent_id,
    input: {
      init: mergedInit ?? null,
      config: checked,
      record: record ?? null,
      display_name: displayName,
      metadata,
    },
  };
}
