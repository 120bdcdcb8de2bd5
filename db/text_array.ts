// A text[] parameter sent as one JSON text. postgres.js serialises a JS array parameter by the
// array types it fetches per connection; on a connection that had not fetched them yet, an empty
// array went out as "" and PostgreSQL refused it ("malformed array literal": a connect failed 500
// in CI). A string parameter has no such state (cast through text: a parameter PostgreSQL
// describes as jsonb, postgres.js would stringify again).
import type { Sql } from "./client.ts";

/** `xs` as a PostgreSQL text[] expression, for use inside a sql`` query. */
export function textArray(sql: Sql, xs: readonly string[]) {
  return sql`array(select jsonb_array_elements_text(${JSON.stringify(xs)}::text::jsonb))`;
}
