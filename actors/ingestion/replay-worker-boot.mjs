// The replay thread's entry (see replay-thread.ts): registers tsx in this worker, then
// loads the TypeScript worker. Node 20 does not apply loader hooks given by `--import`
// in a worker's execArgv to the worker's own entry file.
import { register } from "tsx/esm/api";

register();
await import("./replay-worker.ts");
