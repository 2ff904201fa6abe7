/**
 * Optional Ed25519 signature of the certificate with a key the user gives (`node:crypto`).
 * What is signed: the canonical JSON of the certificate without its `signature` field. The public
 * key travels in the certificate; `verify --public-key` pins the one you expect (the embedded key
 * alone proves integrity, not who signed).
 */
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { canonicalJson, sha256 } from './digest.ts';

export interface Signature {
  algorithm: 'Ed25519';
  /** SPKI PEM of the public key. */
  publicKey: string;
  /** SHA-256 of the public key's DER, to compare at a glance. */
  publicKeyFingerprint: string;
  /** Base64 signature over the canonical JSON of the certificate without `signature`. */
  value: string;
}

/** Reads an Ed25519 private key (PKCS#8 PEM). The error never quotes the key material. */
export function loadPrivateKey(pem: string, source: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new Error(`${source}: not a PEM private key (expected an Ed25519 PKCS#8 key: openssl genpkey -algorithm ed25519)`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${source}: the key is ${key.asymmetricKeyType}, expected ed25519`);
  return key;
}

export function fingerprint(publicKey: KeyObject): string {
  return sha256(publicKey.export({ type: 'spki', format: 'der' }));
}

function payload(certificate: object): Buffer {
  const { signature: _ignored, ...body } = certificate as { signature?: unknown };
  return Buffer.from(canonicalJson(body));
}

/** Returns the signature of `certificate` (its own `signature` field, if any, is left out). */
export function signCertificate(certificate: object, privateKey: KeyObject): Signature {
  const publicKey = createPublicKey(privateKey);
  return {
    algorithm: 'Ed25519',
    publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    publicKeyFingerprint: fingerprint(publicKey),
    value: sign(null, payload(certificate), privateKey).toString('base64'),
  };
}

/** Checks the certificate's signature; `expectedPublicKey` (PEM) pins the signer. */
export function checkSignature(certificate: { signature?: Signature }, expectedPublicKey?: string): { ok: boolean; detail: string } {
  const sig = certificate.signature;
  if (!sig) {
    return {
      ok: expectedPublicKey === undefined,
      detail:
        'the certificate is not signed: its digests prove it is self-consistent, not who made it (anyone can recompute them); sign with --sign-key and verify with --public-key to prove its origin',
    };
  }
  if (sig.algorithm !== 'Ed25519') return { ok: false, detail: `unknown signature algorithm ${JSON.stringify(sig.algorithm)}` };
  let embedded: KeyObject;
  try {
    embedded = createPublicKey(sig.publicKey);
  } catch {
    return { ok: false, detail: 'the embedded public key is not a PEM public key' };
  }
  if (expectedPublicKey !== undefined) {
    let expected: KeyObject;
    try {
      expected = createPublicKey(expectedPublicKey);
    } catch {
      return { ok: false, detail: 'the given public key is not a PEM public key' };
    }
    if (fingerprint(expected) !== fingerprint(embedded)) {
      return { ok: false, detail: `signed by key ${fingerprint(embedded).slice(0, 16)}…, expected ${fingerprint(expected).slice(0, 16)}…` };
    }
  }
  const ok = verify(null, payload(certificate), embedded, Buffer.from(sig.value, 'base64'));
  return ok
    ? {
        ok: true,
        detail: `Ed25519 signature valid (key ${fingerprint(embedded).slice(0, 16)}…${expectedPublicKey ? ', the expected one' : ', not pinned: pass --public-key to check who signed'})`,
      }
    : { ok: false, detail: 'Ed25519 signature does not match the certificate: it was changed after signing' };
}
