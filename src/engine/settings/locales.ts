/**
 * Locales accepted by `localizedAttributes`: the spec's three-letter codes and their two-letter
 * equivalents. Stored and shown in their three-letter form, as the reference does.
 */
const PAIRS: readonly (readonly [string | null, string])[] = [
  ['af', 'afr'],
  ['ak', 'aka'],
  ['am', 'amh'],
  ['ar', 'ara'],
  ['az', 'aze'],
  ['be', 'bel'],
  ['bn', 'ben'],
  ['bg', 'bul'],
  ['ca', 'cat'],
  ['cs', 'ces'],
  ['da', 'dan'],
  ['de', 'deu'],
  ['el', 'ell'],
  ['en', 'eng'],
  ['eo', 'epo'],
  ['et', 'est'],
  ['fi', 'fin'],
  ['fr', 'fra'],
  ['gu', 'guj'],
  ['he', 'heb'],
  ['hi', 'hin'],
  ['hr', 'hrv'],
  ['hu', 'hun'],
  ['hy', 'hye'],
  ['id', 'ind'],
  ['it', 'ita'],
  ['jv', 'jav'],
  ['ja', 'jpn'],
  ['kn', 'kan'],
  ['ka', 'kat'],
  ['km', 'khm'],
  ['ko', 'kor'],
  ['la', 'lat'],
  ['lv', 'lav'],
  ['lt', 'lit'],
  ['ml', 'mal'],
  ['mr', 'mar'],
  ['mk', 'mkd'],
  ['my', 'mya'],
  ['ne', 'nep'],
  ['nl', 'nld'],
  ['nb', 'nob'],
  ['or', 'ori'],
  ['pa', 'pan'],
  ['fa', 'pes'],
  ['pl', 'pol'],
  ['pt', 'por'],
  ['ro', 'ron'],
  ['ru', 'rus'],
  ['si', 'sin'],
  ['sk', 'slk'],
  ['sl', 'slv'],
  ['sn', 'sna'],
  ['es', 'spa'],
  ['sr', 'srp'],
  ['sv', 'swe'],
  ['ta', 'tam'],
  ['te', 'tel'],
  ['tl', 'tgl'],
  ['th', 'tha'],
  ['tk', 'tuk'],
  ['tr', 'tur'],
  ['uk', 'ukr'],
  ['ur', 'urd'],
  ['uz', 'uzb'],
  ['vi', 'vie'],
  ['yi', 'yid'],
  ['zu', 'zul'],
  // Mandarin has no two-letter code of its own.
  [null, 'cmn'],
];

const TO_THREE = new Map<string, string>();
for (const [two, three] of PAIRS) {
  if (two) TO_THREE.set(two, three);
  TO_THREE.set(three, three);
}

/** Every accepted spelling, in the order the reference lists them: two-letter, then three-letter. */
export const LOCALE_CODES: readonly string[] = [
  ...PAIRS.flatMap(([two]) => (two ? [two] : [])),
  ...PAIRS.map(([, three]) => three),
];

/** The three-letter form of an accepted locale, or undefined. */
export function canonicalLocale(code: string): string | undefined {
  return TO_THREE.get(code);
}
