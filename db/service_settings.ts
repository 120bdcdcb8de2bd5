// Secrets the service generates for itself on first start when the environment gives none.
// Insert-if-absent then read, so processes starting together agree on one value.
import type { Sql } from "./client.ts";

export async function settingOrCreate(
  sql: Sql,
  name: string,
  make: () => string | Promise<string>,
): Promise<string> {
  const existing = await sql<{ value: string }[]>`
    select value from service_settings where name = ${name}`;
  if (existing.length) return existing[0].value;
  const value = await make();
  await sql`insert into service_settings (name, value) values (${name}, ${value})
    on conflict (name) do nothing`;
  const [row] = await sql<{ value: string }[]>`
    select value from service_settings where name = ${name}`;
  return row.value;
}
