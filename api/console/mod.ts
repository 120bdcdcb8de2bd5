// The operator console's entry point for the API app (routes in routes.tsx).
export { consoleApp, type ConsoleOptions, mountConsole } from "./routes.tsx";
