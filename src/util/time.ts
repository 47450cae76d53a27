/** RFC 3339 with microsecond-looking precision, as the reference prints (`2024-08-08T17:05:55.791772Z`). */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** ISO-8601 duration the way the reference prints it: `PT0.012S`, `P1DT3.5S`. */
export function isoDuration(ms: number): string {
  const totalSeconds = ms / 1000;
  const days = Math.floor(totalSeconds / 86400);
  const rest = totalSeconds - days * 86400;
  let secs = rest.toFixed(3);
  if (secs.endsWith('.000')) secs = secs.slice(0, -4);
  return `P${days > 0 ? `${days}D` : ''}T${secs}S`;
}
