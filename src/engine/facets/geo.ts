import { Bitmap, lowerBound } from './bitmap.js';

const EARTH_RADIUS_M = 6371e3;
const METERS_PER_DEGREE = (EARTH_RADIUS_M * Math.PI) / 180;
const RAD = Math.PI / 180;

/** Great-circle distance in meters (haversine on a 6371 km sphere, rounded to the millimeter). */
export function haversine(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const p1 = lat1 * RAD;
  const p2 = lat2 * RAD;
  const hav = (t: number) => (1 - Math.cos(t)) / 2;
  const total = hav(p2 - p1) + Math.cos(p1) * Math.cos(p2) * hav((lng2 - lng1) * RAD);
  return Math.round(2 * EARTH_RADIUS_M * Math.asin(Math.sqrt(Math.min(1, total))) * 1000) / 1000;
}

/**
 * The `_geo` points of an index's documents. Radius queries scan the latitude band the
 * circle can reach, found by binary search in a latitude-sorted copy built on first use.
 */
export class GeoPoints {
  readonly points = new Map<number, [number, number]>();
  private byLat: { lat: Float64Array; lng: Float64Array; ids: Uint32Array } | null = null;

  changed(): void {
    this.byLat = null;
  }

  get(docid: number): [number, number] | undefined {
    return this.points.get(docid);
  }

  private sorted() {
    if (this.byLat) return this.byLat;
    const entries = [...this.points.entries()].sort((a, b) => a[1][0] - b[1][0]);
    const lat = new Float64Array(entries.length);
    const lng = new Float64Array(entries.length);
    const ids = new Uint32Array(entries.length);
    entries.forEach(([d, [la, ln]], i) => {
      lat[i] = la;
      lng[i] = ln;
      ids[i] = d;
    });
    this.byLat = { lat, lng, ids };
    return this.byLat;
  }

  /** Documents whose point is within `radius` meters of (lat, lng). */
  withinRadius(lat: number, lng: number, radius: number, capacity: number): Bitmap {
    const out = new Bitmap(capacity);
    const s = this.sorted();
    const reach = Math.max(0, radius) / METERS_PER_DEGREE + 1e-9;
    let i = lowerBound(s.lat, lat - reach);
    const max = lat + reach;
    const limit = radius + Number.EPSILON;
    for (; i < s.lat.length && s.lat[i]! <= max; i++) {
      if (haversine(lat, lng, s.lat[i]!, s.lng[i]!) <= limit) out.add(s.ids[i]!);
    }
    return out;
  }

  /** Documents whose point lies in the box; a box whose west edge is east of its east edge wraps the antimeridian. */
  withinBox(top: number, east: number, bottom: number, west: number, capacity: number): Bitmap {
    const out = new Bitmap(capacity);
    const s = this.sorted();
    const wraps = east < west;
    for (let i = lowerBound(s.lat, bottom); i < s.lat.length && s.lat[i]! <= top; i++) {
      const g = s.lng[i]!;
      if (wraps ? g >= west || g <= east : g >= west && g <= east) out.add(s.ids[i]!);
    }
    return out;
  }

  /**
   * Candidates with a point in order of distance to (lat, lng), nearest first or farthest
   * first, lazily: a heap is built once and only the documents actually consumed are sorted.
   */
  *byDistance(lat: number, lng: number, candidates: Iterable<number>, ascending: boolean): Generator<[number, number]> {
    const ids: number[] = [];
    const dist: number[] = [];
    for (const d of candidates) {
      const p = this.points.get(d);
      if (!p) continue;
      ids.push(d);
      dist.push(haversine(lat, lng, p[0], p[1]));
    }
    const n = ids.length;
    const heap = Uint32Array.from({ length: n }, (_, i) => i);
    // Ties keep docid order, like the reference's stable sort.
    const before = (a: number, b: number) => {
      const da = dist[a]!;
      const db = dist[b]!;
      if (da !== db) return ascending ? da < db : da > db;
      return ids[a]! < ids[b]!;
    };
    const down = (i: number, size: number) => {
      for (;;) {
        const l = 2 * i + 1;
        if (l >= size) return;
        let m = l;
        if (l + 1 < size && before(heap[l + 1]!, heap[l]!)) m = l + 1;
        if (!before(heap[m]!, heap[i]!)) return;
        const t = heap[i]!;
        heap[i] = heap[m]!;
        heap[m] = t;
        i = m;
      }
    };
    for (let i = (n >>> 1) - 1; i >= 0; i--) down(i, n);
    for (let size = n; size > 0; size--) {
      const top = heap[0]!;
      heap[0] = heap[size - 1]!;
      down(0, size - 1);
      yield [ids[top]!, dist[top]!];
    }
  }
}
