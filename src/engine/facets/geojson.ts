import { haversine } from './geo.js';

/** A position as GeoJSON writes it: longitude first. */
type Pos = [number, number];

/** A `_geojson` value flattened to what intersection tests need, with its bounding box. */
export interface Shape {
  points: Pos[];
  lines: Pos[][];
  /** Each polygon: outer ring, then holes. */
  polygons: Pos[][][];
  bbox: [number, number, number, number];
}

function isPos(v: unknown): v is Pos {
  return Array.isArray(v) && v.length >= 2 && typeof v[0] === 'number' && typeof v[1] === 'number' && Number.isFinite(v[0]) && Number.isFinite(v[1]);
}

function positions(v: unknown): Pos[] | null {
  if (!Array.isArray(v) || !v.every(isPos)) return null;
  return v.map((p) => [p[0], p[1]]);
}

function rings(v: unknown): Pos[][] | null {
  if (!Array.isArray(v)) return null;
  const out: Pos[][] = [];
  for (const r of v) {
    const ring = positions(r);
    if (!ring || ring.length < 3) return null;
    out.push(ring);
  }
  return out.length > 0 ? out : null;
}

/** Reads a GeoJSON geometry, Feature or collection; null when it is not valid GeoJSON. */
export function parseShape(v: unknown): Shape | null {
  const s: Shape = { points: [], lines: [], polygons: [], bbox: [Infinity, Infinity, -Infinity, -Infinity] };
  const add = (g: unknown): boolean => {
    if (typeof g !== 'object' || g === null) return false;
    const o = g as Record<string, unknown>;
    const c = o['coordinates'];
    switch (o['type']) {
      case 'Feature':
        return add(o['geometry']);
      case 'FeatureCollection':
        return Array.isArray(o['features']) && o['features'].every(add);
      case 'GeometryCollection':
        return Array.isArray(o['geometries']) && o['geometries'].every(add);
      case 'Point':
        if (!isPos(c)) return false;
        s.points.push([c[0], c[1]]);
        return true;
      case 'MultiPoint': {
        const p = positions(c);
        if (p) for (const pos of p) s.points.push(pos);
        return p !== null;
      }
      case 'LineString': {
        const p = positions(c);
        if (p && p.length >= 2) s.lines.push(p);
        return p !== null && p.length >= 2;
      }
      case 'MultiLineString':
        return Array.isArray(c) && c.every((l) => add({ type: 'LineString', coordinates: l }));
      case 'Polygon': {
        const r = rings(c);
        if (r) s.polygons.push(r);
        return r !== null;
      }
      case 'MultiPolygon':
        return Array.isArray(c) && c.every((p) => add({ type: 'Polygon', coordinates: p }));
      default:
        return false;
    }
  };
  if (!add(v)) return null;
  const all = [...s.points, ...s.lines.flat(), ...s.polygons.flat(2)];
  if (all.length === 0) return null;
  for (const [x, y] of all) {
    s.bbox = [Math.min(s.bbox[0], x), Math.min(s.bbox[1], y), Math.max(s.bbox[2], x), Math.max(s.bbox[3], y)];
  }
  return s;
}

function inRing(p: Pos, ring: Pos[]): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i]!;
    const [xj, yj] = ring[j]!;
    if (yi > p[1] !== yj > p[1] && p[0] < ((xj - xi) * (p[1] - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

function inPolygon(p: Pos, poly: Pos[][]): boolean {
  return inRing(p, poly[0]!) && !poly.slice(1).some((hole) => inRing(p, hole));
}

function orient(a: Pos, b: Pos, c: Pos): number {
  return Math.sign((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
}

function onSegment(a: Pos, b: Pos, p: Pos): boolean {
  return Math.min(a[0], b[0]) <= p[0] && p[0] <= Math.max(a[0], b[0]) && Math.min(a[1], b[1]) <= p[1] && p[1] <= Math.max(a[1], b[1]);
}

function segmentsCross(a: Pos, b: Pos, c: Pos, d: Pos): boolean {
  const o1 = orient(a, b, c);
  const o2 = orient(a, b, d);
  const o3 = orient(c, d, a);
  const o4 = orient(c, d, b);
  if (o1 !== o2 && o3 !== o4) return true;
  return (o1 === 0 && onSegment(a, b, c)) || (o2 === 0 && onSegment(a, b, d)) || (o3 === 0 && onSegment(c, d, a)) || (o4 === 0 && onSegment(c, d, b));
}

function* segments(path: Pos[], closed: boolean): Generator<[Pos, Pos]> {
  for (let i = 0; i + 1 < path.length; i++) yield [path[i]!, path[i + 1]!];
  if (closed && path.length > 2) yield [path[path.length - 1]!, path[0]!];
}

function pathCrossesRing(path: Pos[], closed: boolean, ring: Pos[]): boolean {
  for (const [a, b] of segments(path, closed)) for (const [c, d] of segments(ring, true)) if (segmentsCross(a, b, c, d)) return true;
  return false;
}

/** Whether the shape touches the polygon `ring` (longitude-first positions). */
export function intersectsPolygon(s: Shape, ring: Pos[]): boolean {
  // A loop, not Math.min(...xs): a polygon may have more points than a call takes arguments.
  let [minX, minY, maxX, maxY] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const [x, y] of ring) {
    if (x < minX) minX = x;
    if (x > maxX) maxX = x;
    if (y < minY) minY = y;
    if (y > maxY) maxY = y;
  }
  if (s.bbox[2] < minX || s.bbox[0] > maxX || s.bbox[3] < minY || s.bbox[1] > maxY) return false;
  if (s.points.some((p) => inRing(p, ring))) return true;
  for (const line of s.lines) if (inRing(line[0]!, ring) || pathCrossesRing(line, false, ring)) return true;
  for (const poly of s.polygons) {
    if (inRing(poly[0]![0]!, ring) || inPolygon(ring[0]!, poly)) return true;
    if (poly.some((r) => pathCrossesRing(r, true, ring))) return true;
  }
  return false;
}

/** Whether the shape comes within `radius` meters of (lat, lng). */
export function intersectsCircle(s: Shape, lat: number, lng: number, radius: number): boolean {
  // Segments are measured in a local flat projection around the center: exact enough at filter radii.
  const kx = Math.cos((lat * Math.PI) / 180) * 111_195;
  const ky = 111_195;
  const flat = (p: Pos): [number, number] => [(p[0] - lng) * kx, (p[1] - lat) * ky];
  const segDist = (a: Pos, b: Pos) => {
    const [ax, ay] = flat(a);
    const [bx, by] = flat(b);
    const dx = bx - ax;
    const dy = by - ay;
    const len = dx * dx + dy * dy;
    const t = len === 0 ? 0 : Math.max(0, Math.min(1, -(ax * dx + ay * dy) / len));
    return Math.hypot(ax + t * dx, ay + t * dy);
  };
  if (s.points.some((p) => haversine(lat, lng, p[1], p[0]) <= radius)) return true;
  for (const line of s.lines) for (const [a, b] of segments(line, false)) if (segDist(a, b) <= radius) return true;
  for (const poly of s.polygons) {
    if (inPolygon([lng, lat], poly)) return true;
    for (const r of poly) for (const [a, b] of segments(r, true)) if (segDist(a, b) <= radius) return true;
  }
  return false;
}
