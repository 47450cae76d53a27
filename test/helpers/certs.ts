import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Pem {
  cert: string;
  key: string;
}

const run = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A throwaway certificate authority, its files written in `dir` as `<name>.pem` and `<name>.key`. */
export function makeCa(dir: string, name: string): Pem {
  const f = (ext: string) => join(dir, `${name}.${ext}`);
  run('req', '-x509', ...ec, '-keyout', f('key'), '-out', f('pem'), '-days', '1', '-subj', `/CN=${name}`);
  return { cert: f('pem'), key: f('key') };
}

/**
 * A certificate signed by `ca`; `ip` (e.g. 127.0.0.1, where every test node listens) makes it a
 * server certificate for that address, none a client certificate.
 */
export function issueCert(dir: string, ca: Pem, name: string, ip?: string): Pem {
  const f = (ext: string) => join(dir, `${name}.${ext}`);
  run('req', ...ec, '-keyout', f('key'), '-out', f('csr'), '-subj', `/CN=${ip ?? name}`);
  writeFileSync(f('ext'), ip ? `subjectAltName=IP:${ip}\n` : 'extendedKeyUsage=clientAuth\n');
  run('x509', '-req', '-in', f('csr'), '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-out', f('pem'), '-days', '1', '-extfile', f('ext'));
  return { cert: f('pem'), key: f('key') };
}
