// The replay thread's entry when the service runs as TypeScript (see replay-thread.ts):
// registers tsx in this worker, then loads the TypeScript worker.
import { register } from "tsx/esm/api";

register();
await import("./replay-worker.ts");
