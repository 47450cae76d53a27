// HTTPS for the API (`--ssl-*`, as the reference's flags): the certificate and key, client
// certificates checked against a CA (optional or required), and TLS session resumption by
// session ids or tickets, both off unless asked for.

import { readFileSync } from 'node:fs';
import { constants } from 'node:crypto';
import type { Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { SecureServerOptions } from 'node:http2';
import type { SslOptions } from '../config/options.js';

function readPem(path: string, flag: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new Error(`--${flag}: cannot read \`${path}\`: ${(e as Error).message}`);
  }
}

/** Options of the TLS server Fastify creates. */
export function httpsServerOptions(ssl: SslOptions): SecureServerOptions {
  return {
    cert: readPem(ssl.certPath, 'ssl-cert-path'),
    key: readPem(ssl.keyPath, 'ssl-key-path'),
    ...(ssl.authPath ? { ca: readPem(ssl.authPath, 'ssl-auth-path'), requestCert: true, rejectUnauthorized: ssl.requireAuth } : {}),
    // Session tickets carry the session to the client; off unless --ssl-tickets.
    ...(ssl.tickets ? {} : { secureOptions: constants.SSL_OP_NO_TICKET }),
  };
}

/** Most sessions kept for resumption by id; the oldest go first. */
const MAX_SESSIONS = 10_000;

/**
 * Session ids (`--ssl-resumption`): Node resumes a TLS session only when the server keeps it,
 * so the sessions are kept here, in memory and bounded.
 */
export function keepTlsSessions(server: Server): void {
  const sessions = new Map<string, Buffer>();
  server.on('newSession', (id: Buffer, data: Buffer, done: () => void) => {
    sessions.set(id.toString('hex'), data);
    if (sessions.size > MAX_SESSIONS) sessions.delete(sessions.keys().next().value!);
    done();
  });
  server.on('resumeSession', (id: Buffer, done: (err: Error | null, data: Buffer | null) => void) => {
    done(null, sessions.get(id.toString('hex')) ?? null);
  });
}

/** With an optional client certificate (`--ssl-auth-path` alone), one that does not verify ends the connection. */
export function refuseUnverifiedClientCertificates(server: Server): void {
  server.on('secureConnection', (socket: TLSSocket) => {
    const presented = Object.keys(socket.getPeerCertificate() ?? {}).length > 0;
    if (presented && !socket.authorized) socket.destroy();
  });
}
