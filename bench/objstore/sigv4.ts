/**
 * AWS Signature Version 4 for S3 requests with an unsigned payload (x-amz-content-sha256:
 * UNSIGNED-PAYLOAD), written by hand on node:crypto: a few HMACs per request and no dependency.
 * Path-style URLs, no query strings beyond what the caller passes already sorted and encoded.
 */
import { createHash, createHmac } from 'node:crypto';

export interface Credentials {
  accessKey: string;
  secretKey: string;
  region: string;
  service?: string;
}

export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data).digest();
const sha256hex = (data: string): string => createHash('sha256').update(data).digest('hex');

/** RFC 3986 encoding as S3 wants it for each path segment ('/' kept between segments). */
export function encodePath(path: string): string {
  return path
    .split('/')
    .map((seg) => encodeURIComponent(seg).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');
}

/** 20130524T000000Z */
export function amzDate(d: Date): string {
  return d.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

export class SigV4Signer {
  private readonly service: string;
  private keyDay = '';
  private key: Buffer = Buffer.alloc(0);

  constructor(private readonly creds: Credentials) {
    this.service = creds.service ?? 's3';
  }

  /** The signing key, derived once a day. */
  private signingKey(day: string): Buffer {
    if (day !== this.keyDay) {
      const kDate = hmac(`AWS4${this.creds.secretKey}`, day);
      const kRegion = hmac(kDate, this.creds.region);
      const kService = hmac(kRegion, this.service);
      this.key = hmac(kService, 'aws4_request');
      this.keyDay = day;
    }
    return this.key;
  }

  /**
   * Adds x-amz-date, x-amz-content-sha256 (unless given) and Authorization to `headers`, signing
   * every header given (names lower-cased by the caller), host included. `path` is the encoded
   * path; `query` the canonical query string ('' for none).
   */
  sign(method: string, path: string, query: string, headers: Record<string, string>, now = new Date()): void {
    const date = amzDate(now);
    const day = date.slice(0, 8);
    headers['x-amz-date'] = date;
    headers['x-amz-content-sha256'] ??= UNSIGNED_PAYLOAD;
    const names = Object.keys(headers)
      .map((h) => h.toLowerCase())
      .sort();
    const lower: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) lower[k.toLowerCase()] = String(v).trim().replace(/\s+/g, ' ');
    const signedHeaders = names.join(';');
    const canonical = [method, path, query, names.map((n) => `${n}:${lower[n]}\n`).join(''), signedHeaders, lower['x-amz-content-sha256']].join('\n');
    const scope = `${day}/${this.creds.region}/${this.service}/aws4_request`;
    const toSign = ['AWS4-HMAC-SHA256', date, scope, sha256hex(canonical)].join('\n');
    const signature = createHmac('sha256', this.signingKey(day)).update(toSign).digest('hex');
    headers.authorization = `AWS4-HMAC-SHA256 Credential=${this.creds.accessKey}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  }
}

/**
 * Checks the signer against the worked example of AWS's S3 SigV4 documentation ("GET Object"
 * with a Range header); throws if it does not reproduce the published signature.
 */
export function selfTest(): void {
  const signer = new SigV4Signer({ accessKey: 'AKIAIOSFODNN7EXAMPLE', secretKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', region: 'us-east-1' });
  const headers: Record<string, string> = {
    host: 'examplebucket.s3.amazonaws.com',
    range: 'bytes=0-9',
    'x-amz-content-sha256': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  };
  signer.sign('GET', '/test.txt', '', headers, new Date(Date.UTC(2013, 4, 24)));
  const want = 'f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41';
  if (!headers.authorization!.endsWith(`Signature=${want}`)) throw new Error(`SigV4 self-test failed: ${headers.authorization} (want signature ${want})`);
}
