// A text[] parameter reaches PostgreSQL whole on every connection, including one that has not
// fetched the array types a JS array parameter is serialised by (where an empty array went out as
// "" and a connect failed 500 in CI).
import postgres from "postgres";
import { assertEquals, assertMatch } from "../tests/helpers/assert.ts";
import { freshDatabase, realPostgresUrl, testOnEveryDatabase } from "../tests/helpers/database.ts";
import type { Sql } from "./client.ts";
import { textArray } from "./text_array.ts";

testOnEveryDatabase(
  "textArray sends empty, plain and quoted lists whole, twice in one query",
  async (db) => {
    for (const xs of [[], ["a"], ["a,b", '"q"', "{x}", "NULL", "ü"]]) {
      const [row] = await db.sql<{ a: string[]; n: number }[]>`
      select ${textArray(db.sql, xs)} as a,
        (select count(*)::int from unnest(${textArray(db.sql, xs)}) as k) as n`;
      assertEquals(row.a, xs);
      assertEquals(row.n, xs.length);
    }
  },
);

Deno.test({
  name: "on a connection without the array types an empty JS array is refused; textArray is not",
  ignore: !realPostgresUrl,
  async fn() {
    const db = await freshDatabase();
    const bare = postgres(db.url, { max: 1, fetch_types: false, onnotice: () => {} });
    try {
      // What the reservation sent before: the cause of CI's "malformed array literal".
      const refused = await bare`select ${[] as string[]}::text[] as a`.then(
        () => "accepted",
        (e: Error) => e.message,
      );
      assertMatch(refused, /malformed array literal/);
      const [row] = await bare<{ a: unknown }[]>`select ${
        textArray(bare as unknown as Sql, [])
      } as a`;
      // Accepted; without the array types the driver hands the result back as PostgreSQL's text.
      assertEquals(String(row.a), "{}");
    } finally {
      await bare.end();
      await db.close();
    }
  },
});
