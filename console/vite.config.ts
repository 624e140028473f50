import { fileURLToPath } from "node:url";
import preact from "@preact/preset-vite";
import { defineConfig } from "vite";

// The console is served by the service at /console/ (app/http/routes/console.ts), from
// dist/console, which `npm run build` (and so `npm install`) writes.
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/console/",
  plugins: [preact()],
  build: {
    outDir: fileURLToPath(new URL("../dist/console", import.meta.url)),
    emptyOutDir: true,
    // No inline scripts or styles: the Content-Security-Policy allows only files of the console itself.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
  },
});
