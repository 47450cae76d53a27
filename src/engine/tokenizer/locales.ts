// Locales accepted by `localizedAttributes` and the search `locales` parameter.
//
// The reference accepts the ISO-639-3 codes of its language detector plus their
// ISO-639-1 two-letter equivalents; both spellings name the same locale.

/** ISO-639-3 code → ISO-639-1 code, for every supported locale, in reference order. */
export const ISO639_3_TO_1: Readonly<Record<string, string>> = Object.freeze({
  epo: 'eo', eng: 'en', rus: 'ru', cmn: 'zh', spa: 'es', por: 'pt', ita: 'it', ben: 'bn',
  fra: 'fr', deu: 'de', ukr: 'uk', kat: 'ka', ara: 'ar', hin: 'hi', jpn: 'ja', heb: 'he',
  yid: 'yi', pol: 'pl', amh: 'am', jav: 'jv', kor: 'ko', nob: 'nb', dan: 'da', swe: 'sv',
  fin: 'fi', tur: 'tr', nld: 'nl', hun: 'hu', ces: 'cs', ell: 'el', bul: 'bg', bel: 'be',
  mar: 'mr', kan: 'kn', ron: 'ro', slv: 'sl', hrv: 'hr', srp: 'sr', mkd: 'mk', lit: 'lt',
  lav: 'lv', est: 'et', tam: 'ta', vie: 'vi', urd: 'ur', tha: 'th', guj: 'gu', uzb: 'uz',
  pan: 'pa', aze: 'az', ind: 'id', tel: 'te', pes: 'fa', mal: 'ml', ori: 'or', mya: 'my',
  nep: 'ne', sin: 'si', khm: 'km', tuk: 'tk', aka: 'ak', zul: 'zu', sna: 'sn', afr: 'af',
  lat: 'la', slk: 'sk', cat: 'ca', tgl: 'tl', hye: 'hy',
});

/** ISO-639-1 code → ISO-639-3 code (inverse of {@link ISO639_3_TO_1}). */
export const ISO639_1_TO_3: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(Object.entries(ISO639_3_TO_1).map(([three, two]) => [two, three])),
);

/** The supported three-letter locales, in the order the reference documents them. */
export const SUPPORTED_LOCALES: readonly string[] = Object.freeze(Object.keys(ISO639_3_TO_1));

const has = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/** True when `code` is a supported locale, spelled with 3 or 2 lowercase letters. */
export function isSupportedLocale(code: string): boolean {
  return typeof code === 'string' && (has(ISO639_3_TO_1, code) || has(ISO639_1_TO_3, code));
}

/** Canonical (ISO-639-3) spelling of a supported locale, or undefined. */
export function toIso639_3(code: string): string | undefined {
  if (has(ISO639_3_TO_1, code)) return code;
  return has(ISO639_1_TO_3, code) ? ISO639_1_TO_3[code] : undefined;
}

/** Two-letter spelling of a supported locale, or undefined. */
export function toIso639_1(code: string): string | undefined {
  if (has(ISO639_1_TO_3, code)) return code;
  return has(ISO639_3_TO_1, code) ? ISO639_3_TO_1[code] : undefined;
}

/**
 * Canonicalizes a locale list: unknown codes are dropped, duplicates removed.
 * Returns null for "no restriction" (missing or empty list, or nothing valid).
 */
export function canonicalLocales(locales: readonly string[] | null | undefined): string[] | null {
  if (!locales || locales.length === 0) return null;
  const out: string[] = [];
  for (const l of locales) {
    const c = toIso639_3(l);
    if (c !== undefined && !out.includes(c)) out.push(c);
  }
  return out.length > 0 ? out : null;
}
