// @ts-check
// `npm run lint`; `.ci/run` runs it before the tests.
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", "data/", ".bench/"] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // The repository's tsconfig.json; the two config files at the top sit outside its include.
        projectService: { allowDefaultProject: ["eslint.config.js", "vitest.config.ts"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Fastify plugins, hooks and handlers and the MCP SDK's callbacks are async to take the
      // promise style over the `done` callback, whether or not their body awaits.
      "@typescript-eslint/require-await": "off",
      // `_` names what is left out on purpose: a rest sibling dropped, an argument a callback must take.
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_", ignoreRestSiblings: true },
      ],
    },
  },
  {
    // Tests and benchmarks read HTTP answers (inject().json(), JSON.parse) as `any` on purpose:
    // the assertions are what check their shape.
    files: ["test/**", "bench/**"],
    rules: {
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-explicit-any": "off",
    },
  },
  {
    // Plain JavaScript entry points (bin/, the replay worker's boot file) run under Node.
    files: ["**/*.js", "**/*.mjs"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
);
