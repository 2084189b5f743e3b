/**
 * A QR code drawn here, from the text it carries (the 2FA otpauth address): uqr gives the module
 * matrix, drawn as an SVG of rects (each run of dark modules on a row one rect), black on white
 * with the standard four-module quiet zone, so a phone scans it in a dark theme too. No image is
 * fetched and no style attribute is written (the app's CSP forbids both); the size comes from the
 * style sheet (`.qr`). The accessible name says what it is; the same text is shown beside it.
 */
import { encode } from 'uqr';

/** Error correction M (15 %): what authenticator setup pages use; the quiet zone of ISO/IEC 18004. */
export const QR_OPTIONS = { ecc: 'M', border: 4 } as const;

export function QrCode({ text, label }: { text: string; label: string }) {
  const { size, data } = encode(text, QR_OPTIONS);
  const runs: Array<{ x: number; y: number; width: number }> = [];
  data.forEach((row, y) => {
    for (let x = 0; x < size; x++) {
      if (!row[x]) continue;
      const start = x;
      while (x + 1 < size && row[x + 1]) x++;
      runs.push({ x: start, y, width: x - start + 1 });
    }
  });
  return (
    <svg class="qr" viewBox={`0 0 ${size} ${size}`} role="img" aria-label={label} shape-rendering="crispEdges" xmlns="http://www.w3.org/2000/svg">
      <rect width={size} height={size} fill="#fff" />
      <g fill="#000">
        {runs.map((run) => (
          <rect key={`${run.x},${run.y}`} x={run.x} y={run.y} width={run.width} height={1} />
        ))}
      </g>
    </svg>
  );
}
