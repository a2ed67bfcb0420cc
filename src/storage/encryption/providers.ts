// The value transformers of encryption at rest, with upstream's wire format:
// an encrypted value is `k8s:enc:<provider>:v1:<key name>:` followed by the
// provider's bytes (aescbc: 16-byte IV, then AES-CBC with PKCS#7 padding;
// aesgcm: 12-byte nonce, then AES-GCM ciphertext and tag, the storage key as
// additional data; secretbox: 24-byte nonce, then XSalsa20-Poly1305). The
// identity provider stores values as they are, with no prefix.

import { createCipheriv, createDecipheriv, randomBytes, type CipherGCMTypes } from "node:crypto";
import { xsalsa20poly1305 } from "@noble/ciphers/salsa.js";
import type { StoredForm } from "../transformed-storage.js";

/** One provider key (or identity) turning a value to its stored bytes and back. */
export interface ValueTransformer {
  /** The stored prefix this transformer reads; "" for identity (it reads any value). */
  readonly prefix: Uint8Array;
  /** Stored bytes (prefix included) for `plain`; `key` is the storage key (aesgcm's additional data). */
  seal(plain: Uint8Array, key: string): Uint8Array;
  /** The plain bytes of `body` (the stored bytes after the prefix); throws when they do not open. */
  open(body: Uint8Array, key: string): Uint8Array;
}

export const PROVIDERS = ["aescbc", "aesgcm", "secretbox", "identity"] as const;
export type ProviderType = (typeof PROVIDERS)[number];

/** Key lengths each provider accepts, in bytes. */
export const KEY_LENGTHS: Readonly<Record<Exclude<ProviderType, "identity">, readonly number[]>> = {
  aescbc: [16, 24, 32],
  aesgcm: [16, 24, 32],
  secretbox: [32],
};

const enc = new TextEncoder();

const ENCRYPTED = enc.encode("k8s:enc:");

export function identityTransformer(): ValueTransformer {
  return {
    prefix: new Uint8Array(0),
    seal: (plain) => plain,
    open(body) {
      if (startsWith(body, ENCRYPTED)) throw new Error("identity transformer tried to read encrypted data");
      return body;
    },
  };
}

export function keyTransformer(type: Exclude<ProviderType, "identity">, keyName: string, secret: Uint8Array): ValueTransformer {
  const prefix = enc.encode(`k8s:enc:${type}:v1:${keyName}:`);
  const withPrefix = (...parts: Uint8Array[]) => Buffer.concat([prefix, ...parts]);
  const aes = `aes-${secret.length * 8}`;
  switch (type) {
    case "aescbc":
      return {
        prefix,
        seal(plain) {
          const iv = randomBytes(16);
          const c = createCipheriv(`${aes}-cbc`, secret, iv);
          return withPrefix(iv, c.update(plain), c.final());
        },
        open(body) {
          if (body.length < 16) throw new Error("the stored data was shorter than the required size");
          const d = createDecipheriv(`${aes}-cbc`, secret, body.subarray(0, 16));
          try {
            return Buffer.concat([d.update(body.subarray(16)), d.final()]);
          } catch {
            throw new Error("invalid PKCS7 data (empty or not padded)");
          }
        },
      };
    case "aesgcm":
      return {
        prefix,
        seal(plain, key) {
          const nonce = randomBytes(12);
          const c = createCipheriv(`${aes}-gcm` as CipherGCMTypes, secret, nonce);
          c.setAAD(enc.encode(key));
          return withPrefix(nonce, c.update(plain), c.final(), c.getAuthTag());
        },
        open(body, key) {
          if (body.length < 12 + 16) throw new Error("the stored data was shorter than the required size");
          const d = createDecipheriv(`${aes}-gcm` as CipherGCMTypes, secret, body.subarray(0, 12));
          d.setAAD(enc.encode(key));
          d.setAuthTag(body.subarray(body.length - 16));
          try {
            return Buffer.concat([d.update(body.subarray(12, body.length - 16)), d.final()]);
          } catch {
            throw new Error("cipher: message authentication failed");
          }
        },
      };
    case "secretbox":
      return {
        prefix,
        seal(plain) {
          const nonce = randomBytes(24);
          return withPrefix(nonce, xsalsa20poly1305(secret, nonce).encrypt(plain));
        },
        open(body) {
          if (body.length < 24) throw new Error("the stored data was shorter than the required size");
          try {
            return xsalsa20poly1305(secret, body.subarray(0, 24)).decrypt(body.subarray(24));
          } catch {
            throw new Error("output array was not large enough for encryption");
          }
        },
      };
  }
}

/**
 * One resource rule's providers in order: the first seals every write, any
 * whose prefix the stored bytes start with opens them (upstream's prefix
 * transformer). Reordering keys is rotation: new writes use the new first key,
 * old values still open with the one they name.
 */
export class PrefixTransformers implements StoredForm {
  constructor(readonly transformers: readonly ValueTransformer[]) {}

  seal(plain: Uint8Array, key: string): Uint8Array {
    return this.transformers[0]!.seal(plain, key);
  }

  /** The plain value, and whether it was sealed by another than the first transformer (stale: a write should re-seal it). */
  open(stored: Uint8Array, key: string): { value: Uint8Array; stale: boolean } {
    for (const [i, t] of this.transformers.entries()) {
      if (!startsWith(stored, t.prefix)) continue;
      // identity matches every value; placed first (to decrypt everything), it passes encrypted ones on.
      if (t.prefix.length > 0) return { value: t.open(stored.subarray(t.prefix.length), key), stale: i > 0 };
      try {
        return { value: t.open(stored, key), stale: i > 0 };
      } catch {
        continue;
      }
    }
    throw new Error("no matching prefix found");
  }
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (bytes.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}
