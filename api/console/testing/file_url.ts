// file:// URLs the way the worker writes recording URLs.
import { pathToFileURL } from "node:url";

export const toFileUrl = (path: string): string => pathToFileURL(path).href;
