// Languages: what the live worker nodes serve, merged as /api/v1/capabilities reports it, one
// row per roster language with each leg's engines in routing order; then every registered node
// with its state and how many languages each leg serves on it, since a call needs one node that
// serves all its legs and the merged matrix cannot show that.
// Rendered once on the server: no `key` props (the precompiled JSX prints them as attributes).
// deno-lint-ignore-file jsx-key
import type { FC } from "hono/jsx";
import {
  type EngineRef,
  ROSTER_LANGUAGES,
  ROSTER_VOICES,
  type ServeMatrix,
} from "../../common/capabilities.ts";
import type { WorkerNode } from "../../db/nodes.ts";
// The page's language names are the console's too: one list of the roster's names.
import { label } from "../../common/names.ts";
import { Layout, Time } from "./layout.tsx";

export type NodeState = "live" | "stale" | "draining";

/** As sessions.connect sees a node: a stale heartbeat first (the process may be gone). */
export function nodeState(node: WorkerNode, now: Date, staleSeconds: number): NodeState {
  if (now.getTime() - node.heartbeat_at.getTime() > staleSeconds * 1000) return "stale";
  return node.draining ? "draining" : "live";
}

/** How many languages a matrix recognises, and speaks in at least one persona. */
export function legCounts(m: ServeMatrix): { stt: number; tts: number } {
  const served = Object.values(m);
  return {
    stt: served.filter((s) => s.stt?.length).length,
    tts: served.filter((s) => Object.values(s.tts ?? {}).some((refs) => refs.length)).length,
  };
}

const Engines: FC<{ refs?: EngineRef[] }> = ({ refs }) =>
  refs?.length
    ? (
      <ol class="engines">
        {refs.map((r) => (
          <li>
            <span class="mono">{r.engine}</span> <span class={`badge k-${r.kind}`}>{r.kind}</span>
          </li>
        ))}
      </ol>
    )
    : <span class="muted">—</span>;

const LanguageRow: FC<{ language: string; served?: ServeMatrix[string] }> = (
  { language, served },
) => {
  const any = !!served?.stt?.length ||
    ROSTER_VOICES.some((v) => served?.tts?.[v]?.length);
  return (
    <tr data-language={language} class={any ? undefined : "unserved"}>
      <td>
        {label(language)} <span class="mono small muted">{language}</span>
        {!any && <span class="badge">not served</span>}
      </td>
      <td data-leg="stt">
        <Engines refs={served?.stt} />
      </td>
      {ROSTER_VOICES.map((v) => (
        <td data-leg={v}>
          <Engines refs={served?.tts?.[v]} />
        </td>
      ))}
    </tr>
  );
};

const NodeRow: FC<{ node: WorkerNode; state: NodeState }> = ({ node, state }) => {
  const counts = legCounts(node.serves);
  return (
    <tr data-node={node.node_id}>
      <td class="mono">{node.node_id}</td>
      <td>
        <span class={`badge n-${state}`}>{state}</span>
      </td>
      <td class="num">{node.capacity}</td>
      <td class="num">{node.active_calls}</td>
      <td class="num" data-leg="stt">{counts.stt}</td>
      <td class="num" data-leg="tts">{counts.tts}</td>
      <td>
        <Time at={node.heartbeat_at} />
      </td>
    </tr>
  );
};

export const LanguagesPage: FC<{
  /** The live nodes' matrices merged (what connect can accept somewhere). */
  served: ServeMatrix;
  liveNodes: number;
  nodes: WorkerNode[];
  now: Date;
  staleSeconds: number;
}> = ({ served, liveNodes, nodes, now, staleSeconds }) => {
  const counts = legCounts(
    Object.fromEntries(ROSTER_LANGUAGES.filter((l) => served[l]).map((l) => [l, served[l]])),
  );
  return (
    <Layout title="Languages">
      <h1>Languages</h1>
      {liveNodes === 0
        ? (
          <p class="notice error" role="alert">
            No live worker node: sessions.connect refuses every call.
          </p>
        )
        : (
          <p>
            What {liveNodes === 1 ? "the live node serves" : `${liveNodes} live nodes serve`}:{" "}
            {counts.stt} of {ROSTER_LANGUAGES.length} languages recognised, {counts.tts}{" "}
            spoken. Each cell lists the engines in routing order: the first serves, the rest are its
            fallbacks. A call needs one node that serves its voice, speaking language and hearing
            language.
          </p>
        )}
      <table id="languages">
        <thead>
          <tr>
            <th>Language</th>
            <th>Recognition</th>
            {ROSTER_VOICES.map((v) => <th class="mono">{v}</th>)}
          </tr>
        </thead>
        <tbody>
          {ROSTER_LANGUAGES.map((l) => <LanguageRow language={l} served={served[l]} />)}
        </tbody>
      </table>

      <h2>Nodes</h2>
      {nodes.length === 0 ? <p class="muted">No worker node has registered.</p> : (
        <table id="nodes">
          <thead>
            <tr>
              <th>Node</th>
              <th>State</th>
              <th class="num">Capacity</th>
              <th class="num">Active calls</th>
              <th class="num">Languages recognised</th>
              <th class="num">Languages spoken</th>
              <th>Heartbeat</th>
            </tr>
          </thead>
          <tbody>
            {nodes.map((n) => <NodeRow node={n} state={nodeState(n, now, staleSeconds)} />)}
          </tbody>
        </table>
      )}
      <p class="muted small">
        Stale: no heartbeat for {staleSeconds}{" "}
        s. Stale and draining nodes take no new calls and are left out of the table above.
      </p>
    </Layout>
  );
};
