/** The log query compiler: body → parameterized ClickHouse SQL, and result rows → answer rows. See README.md. */
export { compileLogQuery } from "./compile.js";
export { QueryBodySchema, type QueryBody } from "./schema.js";
export { auditedPatients, countOf, pageRows, shapeRows } from "./shape.js";
export {
  AGG_OPS, DEFAULT_LIMITS, FILTER_OPS, MAX_OFFSET, QueryValidationError, isQueryValidationError,
  type AggOp, type CompileLimits, type CompileScope, type CompiledQuery, type FilterOp, type QueryShape,
} from "./types.js";
