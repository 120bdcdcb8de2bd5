// Every response, error or not, carries a correlation id; a caller may supply its own.
import type { MiddlewareHandler } from "hono";
import { randomBase62 } from "../ids.ts";

declare module "hono" {
  interface ContextVariableMap {
    correlationId: string;
  }
}

const SUPPLIED = /^[A-Za-z0-9._-]{8,64}$/;

export const correlation: MiddlewareHandler = async (c, next) => {
  const supplied = c.req.header("x-correlation-id");
  const id = supplied && SUPPLIED.test(supplied) ? supplied : `cor_${randomBase62(20)}`;
  c.set("correlationId", id);
  c.header("X-Correlation-Id", id);
  await next();
};
