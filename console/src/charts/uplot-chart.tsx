import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
// As a file: the Content-Security-Policy allows no inline <style>. uPlot's own inline styles
// are set through element.style (CSSOM), which style-src 'self' does not block.
import "uplot/dist/uPlot.min.css";

/**
 * A uPlot canvas as wide as its container. `options` are uPlot's, less width and height;
 * the chart is made again when `data` or `options` change (a new object each time), and
 * resized when its container is. The element gets data-ready once drawn, for tests.
 */
export function UPlotChart({ options, data, height = 260, label }: { options: Omit<uPlot.Options, "width" | "height">; data: uPlot.AlignedData; height?: number; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const width = () => Math.max(300, el.clientWidth);
    const plot = new uPlot({ ...options, width: width(), height }, data, el);
    el.dataset.ready = "true";
    const resize = new ResizeObserver(() => plot.setSize({ width: width(), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
      delete el.dataset.ready;
    };
  }, [options, data, height]);
  // The canvas is drawn for the eye; each chart's caption and table carry its numbers in words.
  return <div ref={box} class="chart" role="img" aria-label={label} />;
}
